/*
 * workload.c: the executor of synthetic training steps (workload.h).
 *
 * What this is: forward and backward passes of a workload spec's layers on
 * any device backend, on real buffers with real gradients, for n virtual
 * stream workers (VSWs) at one local batch, and the IIDP phases around
 * them (data, aggregation, optimizer step, weight copy).  It is written for
 * timing and memory fidelity first: every GEMM has the shape the layer
 * formulas in workload.h give, every activation kept for backward is a
 * real buffer, and the optimizer touches every parameter and its state.
 *
 * Memory plan (per VSW, one arena, B = local batch, sizes per sample):
 *   weights, gradients          params each
 *   x[l]                        tokens x in (the layer's saved input; layer
 *                               0's is the data, or int32 indices)
 *   y[l]                        tokens x out, only where a resize follows or
 *                               for the last layer (else y[l] is x[l+1])
 *   conv: col[l]                tokens x in x taps (im2col, kept for dW)
 *   attention: q, k, v, o       tokens x out each; p: heads x tokens^2
 *   lstm: gates, cell           tokens x 4H and tokens x H (time-major)
 *   target                      the last layer's output size
 *   g0, g1                      the largest layer input or output (gradient
 *                               ping-pong for backward)
 *   scratch                     the largest per-layer backward scratch
 * and for the main VSW one more arena: the optimizer state (SGD momentum:
 * params; Adam: 2 params).  Host memory (task FIXED): two pre-generated
 * batches per VSW, made on the first data phase, so the data phase is the
 * host-to-device copy a prefetching data loader leaves, not random-number
 * generation.
 *
 * Task TEACHER (workload.h): a second state of the same spec, 1 VSW, no
 * gradients or optimizer state, owned by the student's, makes the targets
 * on the device; hb_wl_prefetch stages whole batches (inputs, targets) on
 * the host per VSW so the data phase stays that copy.
 *
 * Initialisation: weights uniform with variance 2/fan_in on layers followed
 * by a ReLU (He et al.), 1/fan_in elsewhere, halved on residual branches,
 * seeded per layer, identical on every VSW.  (With 1/fan_in everywhere a
 * deep ReLU stack's output shrank by ~150x for cifar10 and the teacher task
 * sat on a plateau for ~180 steps.)
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"           /* defines: hb_rng_seed, hb_rng_normal */
#include "workload.h"

#define ALIGN_FLOATS 16  /* 64-byte alignment of every carved buffer */

struct wl_layer_buf {
	float *x;                /* saved input (NULL for an EMBEDDING first layer) */
	float *y;                /* output: x of the next layer, or own buffer */
	int resize_after;        /* 1: y is own and RESIZE_FWD makes the next x */
	float *col;              /* CONV im2col */
	float *q, *k, *v, *o, *p; /* ATTENTION (o: heads layout) */
	float *gates, *cell;     /* LSTM, time-major [t][B][.] */
};

struct wl_staged {
	long batch;              /* batch index */
	void *h;                 /* inputs then targets, as host[] */
};

struct wl_vsw {
	void *arena;             /* one device allocation */
	float *w, *g;            /* weights, gradients */
	struct wl_layer_buf *lb; /* per layer */
	int32_t *idx;            /* EMBEDDING indices (B x input_indices) */
	float *target;
	float *g0, *g1, *scratch;
	void *host[2];           /* FIXED: pre-generated batches; TEACHER: host[0] is the
				  * batch made inside the data phase; inputs then targets */
	size_t host_in_bytes, host_tgt_bytes;
	struct wl_staged *staged; /* TEACHER: batches made by hb_wl_prefetch */
	int nstaged, cap_staged;
};

/* The teacher of task TEACHER (workload.h). */
struct wl_teacher {
	struct hb_wl_state *net; /* same spec, 1 VSW at the student's batch, forward only */
	struct hb_stream *streams[1]; /* its own stream (owned); net keeps this array */
	double sigma;            /* label noise */
	double gain;             /* 1 / RMS of its outputs on the calibration set */
	float *out;              /* host: one batch of its outputs */
	pthread_mutex_t mu;      /* one batch at a time: VSW threads may make batches */
};

struct hb_wl_state {
	const struct hb_device_ops *ops;
	struct hb_device *dev;
	const struct hb_workload *w;
	struct hb_stream *const *streams;
	int B, n;
	long *woff;              /* per layer: offset of its weights in the parameter buffer */
	struct wl_vsw *vsw;
	void *opt_arena;         /* main VSW optimizer state */
	float *m1, *m2;          /* momentum / Adam m, Adam v */
	long step;               /* optimizer steps taken */
	double bytes;            /* device bytes held */
	uint64_t seed;           /* weights */
	uint64_t data_seed;      /* data batches (hb_wl_set_data_seed; = seed by default) */
	enum hb_wl_task task;
	struct wl_teacher *teacher; /* TEACHER: owned */
};

/* ------------------------------------------------------------------------ */
/* Sizes                                                                    */

static long round_up(long n)
{
	return (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
}

static long in_size(const struct hb_wl_layer *L)
{
	return L->tokens * L->in;
}

static long out_size(const struct hb_wl_layer *L)
{
	return L->tokens * L->out;
}

/* Backward scratch of one layer, floats for the whole batch. */
static long layer_scratch(const struct hb_wl_layer *L, long B)
{
	switch (L->kind) {
	case HB_WL_CONV:
		return B * L->tokens * L->in * L->taps;
	case HB_WL_ATTENTION:
		/* S / dP and dS, then dO, dq, dk, dv */
		return 2 * round_up(B * L->heads * L->tokens * L->tokens) + 4 * round_up(B * L->tokens * L->out);
	case HB_WL_LSTM:
		return B * L->out;
	default:
		return 0;
	}
}

/* Floats of one VSW's arena (carve() below walks the same plan); no
 * gradient buffer unless train. */
static long vsw_floats(const struct hb_workload *w, long B, long params, int train)
{
	long total = (train ? 2 : 1) * round_up(params), max_act = 0, max_scratch = 0;

	for (int l = 0; l < w->nlayers; l++) {
		const struct hb_wl_layer *L = &w->layers[l];
		int last = l == w->nlayers - 1;

		if (in_size(L) > max_act)
			max_act = in_size(L);
		if (out_size(L) > max_act)
			max_act = out_size(L);
		if (layer_scratch(L, B) > max_scratch)
			max_scratch = layer_scratch(L, B);
		total += round_up(B * in_size(L));  /* x (int32 indices fit in it) */
		if (last || out_size(L) != in_size(&w->layers[l + 1]))
			total += round_up(B * out_size(L));
		if (L->kind == HB_WL_CONV)
			total += round_up(B * L->tokens * L->in * L->taps);
		if (L->kind == HB_WL_ATTENTION)
			total += 4 * round_up(B * L->tokens * L->out) + round_up(B * L->heads * L->tokens * L->tokens);
		if (L->kind == HB_WL_LSTM)
			total += round_up(B * L->tokens * 4 * L->out) + round_up(B * L->tokens * L->out);
	}
	total += round_up(B * out_size(&w->layers[w->nlayers - 1]));  /* target */
	total += 2 * round_up(B * max_act) + round_up(max_scratch);
	return total;
}

static float *take(float **cur, long n)
{
	float *p = *cur;

	*cur += round_up(n);
	return p;
}

static void carve(const struct hb_workload *w, long B, long params, int train, float *base, struct wl_vsw *v)
{
	float *cur = base;
	long max_act = 0, max_scratch = 0;

	v->w = take(&cur, params);
	v->g = train ? take(&cur, params) : NULL;
	for (int l = 0; l < w->nlayers; l++) {
		const struct hb_wl_layer *L = &w->layers[l];

		v->lb[l].x = take(&cur, B * in_size(L));
		if (in_size(L) > max_act)
			max_act = in_size(L);
		if (out_size(L) > max_act)
			max_act = out_size(L);
		if (layer_scratch(L, B) > max_scratch)
			max_scratch = layer_scratch(L, B);
	}
	for (int l = 0; l < w->nlayers; l++) {
		const struct hb_wl_layer *L = &w->layers[l];
		struct wl_layer_buf *b = &v->lb[l];
		int last = l == w->nlayers - 1;

		if (last || out_size(L) != in_size(&w->layers[l + 1])) {
			b->y = take(&cur, B * out_size(L));
			b->resize_after = !last;
		} else {
			b->y = v->lb[l + 1].x;
		}
		if (L->kind == HB_WL_CONV)
			b->col = take(&cur, B * L->tokens * L->in * L->taps);
		if (L->kind == HB_WL_ATTENTION) {
			b->q = take(&cur, B * L->tokens * L->out);
			b->k = take(&cur, B * L->tokens * L->out);
			b->v = take(&cur, B * L->tokens * L->out);
			b->o = take(&cur, B * L->tokens * L->out);
			b->p = take(&cur, B * L->heads * L->tokens * L->tokens);
		}
		if (L->kind == HB_WL_LSTM) {
			b->gates = take(&cur, B * L->tokens * 4 * L->out);
			b->cell = take(&cur, B * L->tokens * L->out);
		}
	}
	if (w->layers[0].kind == HB_WL_EMBEDDING)
		v->idx = (int32_t *)v->lb[0].x;
	v->target = take(&cur, B * out_size(&w->layers[w->nlayers - 1]));
	v->g0 = take(&cur, B * max_act);
	v->g1 = take(&cur, B * max_act);
	v->scratch = take(&cur, max_scratch);
}

/* ------------------------------------------------------------------------ */
/* Small wrappers                                                           */

static int gemm(struct hb_wl_state *st, int vsw, int ta, int tb, long m, long n, long k, const float *a, long lda,
		const float *b, long ldb, float beta, float *c, long ldc, struct hb_error *err)
{
	struct hb_gemm g = {
		.trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .alpha = 1.0f, .beta = beta,
		.a = a, .lda = lda, .b = b, .ldb = ldb, .c = c, .ldc = ldc, .batch = 1,
	};

	return st->ops->gemm(st->streams[vsw], &g, err);
}

static int kern(struct hb_wl_state *st, int vsw, struct hb_kernel k, struct hb_error *err)
{
	return st->ops->kernel(st->streams[vsw], &k, err);
}

static int fill(struct hb_wl_state *st, int vsw, float *y, long n, float a, struct hb_error *err)
{
	return kern(st, vsw, (struct hb_kernel){ .op = HB_K_FILL, .y = y, .n = n, .a = a }, err);
}

static int axpy(struct hb_wl_state *st, int vsw, float *y, const float *x, long n, float a, struct hb_error *err)
{
	return kern(st, vsw, (struct hb_kernel){ .op = HB_K_AXPY, .y = y, .x = x, .n = n, .a = a }, err);
}

/* ------------------------------------------------------------------------ */
/* Create / free                                                            */

static int check_spec(const struct hb_workload *w, struct hb_error *err)
{
	if (!w || w->nlayers < 1 || !w->layers)
		return hb_input_error(err, "workload: empty spec");
	for (int l = 0; l < w->nlayers; l++) {
		const struct hb_wl_layer *L = &w->layers[l];

		if (L->tokens < 1 || L->in < 1 || L->out < 1)
			return hb_input_error(err, "workload %s: layer %s: non-positive shape", w->model, L->name);
		if (L->relu && L->residual)
			return hb_input_error(err, "workload %s: layer %s: ReLU and residual on one layer", w->model,
					      L->name);
		if (L->residual && L->in != L->out)
			return hb_input_error(err, "workload %s: layer %s: residual with in %ld != out %ld", w->model,
					      L->name, L->in, L->out);
		if (L->kind == HB_WL_EMBEDDING && (l != 0 || L->vocab < 1))
			return hb_input_error(err, "workload %s: layer %s: embedding must be first with a vocabulary",
					      w->model, L->name);
		if (L->kind == HB_WL_ATTENTION && (L->heads < 1 || L->out % L->heads || L->in != 3 * L->out))
			return hb_input_error(err, "workload %s: layer %s: attention shape", w->model, L->name);
		if (L->kind == HB_WL_CONV && L->taps < 1)
			return hb_input_error(err, "workload %s: layer %s: conv without taps", w->model, L->name);
	}
	return 0;
}

static long layer_params(const struct hb_wl_layer *L)
{
	switch (L->kind) {
	case HB_WL_DENSE: return L->in * L->out;
	case HB_WL_CONV: return L->in * L->taps * L->out;
	case HB_WL_LSTM: return 4 * L->out * (L->in + L->out);
	case HB_WL_EMBEDDING: return L->vocab * L->out;
	default: return 0;
	}
}

static long fan_in(const struct hb_wl_layer *L)
{
	switch (L->kind) {
	case HB_WL_CONV: return L->in * L->taps;
	case HB_WL_LSTM: return L->in + L->out;
	case HB_WL_EMBEDDING: return 1;
	default: return L->in;
	}
}

/* n inputs of layer `first` from a seed: uniform in [-1, 1), or uniform
 * int32 indices into its vocabulary. */
static void fill_inputs(const struct hb_wl_layer *first, uint64_t seed, void *in, long n)
{
	for (long j = 0; j < n; j++) {
		float u = hb_hash_unit(seed, (uint64_t)j);

		if (first->kind == HB_WL_EMBEDDING)
			((int32_t *)in)[j] = (int32_t)(u * (float)first->vocab) % (int32_t)first->vocab;
		else
			((float *)in)[j] = 2.0f * (u - 0.5f);
	}
}

/* Host batches: inputs (or indices) and targets, two per VSW. */
static int make_host_batches(struct hb_wl_state *st, int i, struct hb_error *err)
{
	const struct hb_workload *w = st->w;
	struct wl_vsw *v = &st->vsw[i];
	const struct hb_wl_layer *first = &w->layers[0], *last = &w->layers[w->nlayers - 1];
	long nin = st->B * in_size(first), ntg = st->B * out_size(last);

	v->host_in_bytes = (size_t)nin * 4;
	v->host_tgt_bytes = (size_t)ntg * 4;
	for (int b = 0; b < 2; b++) {
		uint64_t seed = st->data_seed ^ (0x5bd1e995ull * (uint64_t)(i * 2 + b + 1));
		char *h = malloc(v->host_in_bytes + v->host_tgt_bytes);
		float *in = (float *)h, *tg = (float *)(h + v->host_in_bytes);

		if (!h) {
			free(v->host[0]);
			v->host[0] = NULL;
			return hb_runtime_error(err, "workload %s: out of host memory for the data batches", w->model);
		}
		v->host[b] = h;
		fill_inputs(first, seed, in, nin);
		for (long j = 0; j < ntg; j++)
			tg[j] = hb_hash_unit(seed + 1, (uint64_t)j) - 0.5f;
	}
	return 0;
}

/* hb_wl_state_create; train = 0 leaves out the gradients and the
 * optimizer state (a teacher, which only runs forward). */
static int state_create(const struct hb_device_ops *ops, struct hb_device *dev, const struct hb_workload *w,
			int local_bs, int n_vsw, struct hb_stream *const *streams, uint64_t seed, int train,
			struct hb_wl_state **out, struct hb_error *err)
{
	struct hb_wl_state *st;
	long params = 0, per_vsw, opt_floats;
	int rc;

	*out = NULL;
	if (check_spec(w, err) < 0)
		return -1;
	if (local_bs < 1 || n_vsw < 1)
		return hb_input_error(err, "workload %s: local batch %d and VSWs %d must be positive", w->model,
				      local_bs, n_vsw);
	st = calloc(1, sizeof(*st));
	if (!st)
		return hb_runtime_error(err, "workload: out of memory");
	st->ops = ops;
	st->dev = dev;
	st->w = w;
	st->streams = streams;
	st->B = local_bs;
	st->n = n_vsw;
	st->seed = seed;
	st->data_seed = seed;
	st->task = HB_WL_TASK_FIXED;
	st->woff = calloc((size_t)w->nlayers, sizeof(*st->woff));
	st->vsw = calloc((size_t)n_vsw, sizeof(*st->vsw));
	if (!st->woff || !st->vsw)
		goto oom;
	for (int l = 0; l < w->nlayers; l++) {
		st->woff[l] = params;
		params += round_up(layer_params(&w->layers[l]));
	}
	per_vsw = vsw_floats(w, local_bs, params, train);
	for (int i = 0; i < n_vsw; i++) {
		struct wl_vsw *v = &st->vsw[i];

		v->lb = calloc((size_t)w->nlayers, sizeof(*v->lb));
		if (!v->lb)
			goto oom;
		rc = ops->mem_alloc(dev, (size_t)per_vsw * 4, &v->arena, err);
		if (rc != 0)
			goto fail_rc;
		st->bytes += (double)per_vsw * 4;
		carve(w, local_bs, params, train, v->arena, v);
	}
	opt_floats = train ? (w->optimizer == HB_WL_ADAM ? 2 : 1) * round_up(params) : 0;
	if (train) {
		rc = ops->mem_alloc(dev, (size_t)opt_floats * 4, &st->opt_arena, err);
		if (rc != 0)
			goto fail_rc;
		st->bytes += (double)opt_floats * 4;
		st->m1 = st->opt_arena;
		st->m2 = w->optimizer == HB_WL_ADAM ? st->m1 + round_up(params) : NULL;
	}

	/* Initial weights on the main VSW, copied to the others; zero state
	 * and gradients (alignment padding included, so no garbage ever
	 * reaches the optimizer). */
	for (int i = 0; i < n_vsw && train; i++)
		if (fill(st, i, st->vsw[i].g, params, 0.0f, err) < 0)
			goto fail;
	if (fill(st, 0, st->vsw[0].w, params, 0.0f, err) < 0)
		goto fail;
	for (int l = 0; l < w->nlayers; l++) {
		const struct hb_wl_layer *L = &w->layers[l];
		/* uniform of variance 2/fan_in before a ReLU (He), 1/fan_in
		 * elsewhere, halved on residual branches */
		float a = sqrtf((L->relu ? 24.0f : 12.0f) / (float)fan_in(L)) * (L->residual ? 0.5f : 1.0f);

		if (L->kind == HB_WL_ATTENTION)
			continue;
		if (kern(st, 0, (struct hb_kernel){ .op = HB_K_FILL_HASH, .y = st->vsw[0].w + st->woff[l],
						     .n = layer_params(L), .a = a, .seed = seed + (uint64_t)l },
			 err) < 0)
			goto fail;
	}
	if (train && fill(st, 0, st->m1, opt_floats, 0.0f, err) < 0)
		goto fail;
	if (ops->stream_sync(streams[0], err) < 0)
		goto fail;
	for (int i = 1; i < n_vsw; i++)
		if (hb_wl_copy(st, i, err) < 0 || ops->stream_sync(streams[i], err) < 0)
			goto fail;
	*out = st;
	return 0;
fail_rc:
	if (rc == HB_DEV_NOMEM) {
		hb_wl_state_free(st);
		return HB_DEV_NOMEM;
	}
	goto fail;
oom:
	hb_runtime_error(err, "workload: out of host memory");
fail:
	hb_wl_state_free(st);
	return -1;
}

int hb_wl_state_create(const struct hb_device_ops *ops, struct hb_device *dev, const struct hb_workload *w,
		       int local_bs, int n_vsw, struct hb_stream *const *streams, uint64_t seed,
		       struct hb_wl_state **out, struct hb_error *err)
{
	return state_create(ops, dev, w, local_bs, n_vsw, streams, seed, 1, out, err);
}

static void teacher_free(struct hb_wl_state *st);
static void drop_batches(struct hb_wl_state *st);

void hb_wl_state_free(struct hb_wl_state *st)
{
	if (!st)
		return;
	teacher_free(st);
	if (st->vsw) {
		drop_batches(st);
		for (int i = 0; i < st->n; i++) {
			struct wl_vsw *v = &st->vsw[i];

			if (v->arena)
				st->ops->mem_free(st->dev, v->arena);
			free(v->lb);
			free(v->staged);
		}
	}
	if (st->opt_arena)
		st->ops->mem_free(st->dev, st->opt_arena);
	free(st->vsw);
	free(st->woff);
	free(st);
}

double hb_wl_state_bytes(const struct hb_wl_state *st)
{
	return st ? st->bytes : 0;
}

/* ------------------------------------------------------------------------ */
/* Phases                                                                   */

static const void *teacher_batch(struct hb_wl_state *st, int i, long batch, struct hb_error *err);

int hb_wl_data(struct hb_wl_state *st, int i, long iter, struct hb_error *err)
{
	struct wl_vsw *v = &st->vsw[i];
	const char *h;
	struct hb_stream *s = st->streams[i];

	if (st->task == HB_WL_TASK_TEACHER) {
		h = teacher_batch(st, i, iter, err);
		if (!h)
			return -1;
	} else {
		/* Made on first use, so a memory-search trial that never loads
		 * data costs no host memory or time. */
		if (!v->host[0] && make_host_batches(st, i, err) < 0)
			return -1;
		h = v->host[iter & 1];
	}
	if (st->ops->memcpy_h2d(s, v->lb[0].x, h, v->host_in_bytes, err) < 0 ||
	    st->ops->memcpy_h2d(s, v->target, h + v->host_in_bytes, v->host_tgt_bytes, err) < 0)
		return -1;
	return 0;
}

static int attention_fwd(struct hb_wl_state *st, int i, const struct hb_wl_layer *L, struct wl_layer_buf *b,
			 struct hb_error *err)
{
	long B = st->B, t = L->tokens, h = L->heads, dh = L->out / L->heads;
	float *S = st->vsw[i].scratch;
	struct hb_gemm g;

	if (kern(st, i, (struct hb_kernel){ .op = HB_K_SPLIT_HEADS, .x = b->x, .y = b->q, .z = b->k, .w = b->v,
					     .rows = B, .cols = t, .ld = h, .taps = dh }, err) < 0)
		return -1;
	g = (struct hb_gemm){ .trans_b = 1, .m = t, .n = t, .k = dh, .alpha = 1, .beta = 0, .a = b->q, .lda = dh,
			      .stride_a = t * dh, .b = b->k, .ldb = dh, .stride_b = t * dh, .c = S, .ldc = t,
			      .stride_c = t * t, .batch = B * h };
	if (st->ops->gemm(st->streams[i], &g, err) < 0)
		return -1;
	if (kern(st, i, (struct hb_kernel){ .op = HB_K_SOFTMAX_FWD, .y = b->p, .x = S, .rows = B * h * t, .cols = t,
					     .a = 1.0f / sqrtf((float)dh) }, err) < 0)
		return -1;
	g = (struct hb_gemm){ .m = t, .n = dh, .k = t, .alpha = 1, .beta = 0, .a = b->p, .lda = t, .stride_a = t * t,
			      .b = b->v, .ldb = dh, .stride_b = t * dh, .c = b->o, .ldc = dh, .stride_c = t * dh,
			      .batch = B * h };
	if (st->ops->gemm(st->streams[i], &g, err) < 0)
		return -1;
	return kern(st, i, (struct hb_kernel){ .op = HB_K_MERGE_HEADS, .y = b->y, .x = b->o, .rows = B, .cols = t,
						.ld = h, .taps = dh }, err);
}

static int lstm_fwd(struct hb_wl_state *st, int i, const struct hb_wl_layer *L, struct wl_layer_buf *b,
		    const float *W, struct hb_error *err)
{
	long B = st->B, T = L->tokens, in = L->in, H = L->out;
	const float *Wx = W, *Wh = W + in * 4 * H;

	for (long t = 0; t < T; t++) {
		float *gt = b->gates + t * B * 4 * H;

		if (gemm(st, i, 0, 0, B, 4 * H, in, b->x + t * in, T * in, Wx, 4 * H, 0.0f, gt, 4 * H, err) < 0)
			return -1;
		if (t > 0 && gemm(st, i, 0, 0, B, 4 * H, H, b->y + (t - 1) * H, T * H, Wh, 4 * H, 1.0f, gt, 4 * H,
				  err) < 0)
			return -1;
		if (kern(st, i, (struct hb_kernel){ .op = HB_K_LSTM_CELL_FWD, .y = gt,
						     .x = t > 0 ? b->cell + (t - 1) * B * H : NULL,
						     .z = b->cell + t * B * H, .w = b->y + t * H, .rows = B, .cols = H,
						     .ld = T * H }, err) < 0)
			return -1;
	}
	return 0;
}

int hb_wl_forward(struct hb_wl_state *st, int i, struct hb_error *err)
{
	const struct hb_workload *w = st->w;
	struct wl_vsw *v = &st->vsw[i];
	long B = st->B;

	for (int l = 0; l < w->nlayers; l++) {
		const struct hb_wl_layer *L = &w->layers[l];
		struct wl_layer_buf *b = &v->lb[l];
		const float *W = v->w + st->woff[l];
		long rows = B * L->tokens;
		int rc = 0;

		switch (L->kind) {
		case HB_WL_DENSE:
			rc = gemm(st, i, 0, 0, rows, L->out, L->in, b->x, L->in, W, L->out, 0.0f, b->y, L->out, err);
			break;
		case HB_WL_CONV:
			rc = kern(st, i, (struct hb_kernel){ .op = HB_K_IM2COL, .y = b->col, .x = b->x, .rows = B,
							     .cols = L->tokens, .ld = L->in, .taps = L->taps }, err);
			if (rc == 0)
				rc = gemm(st, i, 0, 0, rows, L->out, L->in * L->taps, b->col, L->in * L->taps, W, L->out,
					  0.0f, b->y, L->out, err);
			break;
		case HB_WL_ATTENTION:
			rc = attention_fwd(st, i, L, b, err);
			break;
		case HB_WL_LSTM:
			rc = lstm_fwd(st, i, L, b, W, err);
			break;
		case HB_WL_EMBEDDING:
			rc = kern(st, i, (struct hb_kernel){ .op = HB_K_GATHER_ROWS, .y = b->y, .x = W, .idx = v->idx,
							     .rows = rows, .cols = L->out }, err);
			break;
		}
		if (rc < 0)
			return -1;
		if (L->relu && kern(st, i, (struct hb_kernel){ .op = HB_K_RELU_FWD, .y = b->y, .x = b->y,
							       .n = rows * L->out }, err) < 0)
			return -1;
		if (L->residual && axpy(st, i, b->y, b->x, rows * L->out, 1.0f, err) < 0)
			return -1;
		if (b->resize_after &&
		    kern(st, i, (struct hb_kernel){ .op = HB_K_RESIZE_FWD, .y = v->lb[l + 1].x, .x = b->y, .rows = B,
						    .cols = in_size(&w->layers[l + 1]), .ld = out_size(L) }, err) < 0)
			return -1;
	}
	return 0;
}

static int attention_bwd(struct hb_wl_state *st, int i, const struct hb_wl_layer *L, struct wl_layer_buf *b,
			 const float *dy, float *dx, struct hb_error *err)
{
	long B = st->B, t = L->tokens, h = L->heads, dh = L->out / L->heads, td = B * t * L->out;
	float *dP = st->vsw[i].scratch, *dS = dP + round_up(B * h * t * t);
	float *dO = dS + round_up(B * h * t * t), *dq = dO + round_up(td), *dk = dq + round_up(td),
	      *dv = dk + round_up(td);
	struct hb_gemm g;

	/* dO in heads layout: MERGE_HEADS with heads and tokens swapped is its inverse */
	if (kern(st, i, (struct hb_kernel){ .op = HB_K_MERGE_HEADS, .y = dO, .x = dy, .rows = B, .cols = h, .ld = t,
					     .taps = dh }, err) < 0)
		return -1;
	g = (struct hb_gemm){ .trans_b = 1, .m = t, .n = t, .k = dh, .alpha = 1, .beta = 0, .a = dO, .lda = dh,
			      .stride_a = t * dh, .b = b->v, .ldb = dh, .stride_b = t * dh, .c = dP, .ldc = t,
			      .stride_c = t * t, .batch = B * h };
	if (st->ops->gemm(st->streams[i], &g, err) < 0)
		return -1;
	g = (struct hb_gemm){ .trans_a = 1, .m = t, .n = dh, .k = t, .alpha = 1, .beta = 0, .a = b->p, .lda = t,
			      .stride_a = t * t, .b = dO, .ldb = dh, .stride_b = t * dh, .c = dv, .ldc = dh,
			      .stride_c = t * dh, .batch = B * h };
	if (st->ops->gemm(st->streams[i], &g, err) < 0)
		return -1;
	if (kern(st, i, (struct hb_kernel){ .op = HB_K_SOFTMAX_BWD, .z = dS, .x = dP, .y = b->p, .rows = B * h * t,
					     .cols = t, .a = 1.0f / sqrtf((float)dh) }, err) < 0)
		return -1;
	g = (struct hb_gemm){ .m = t, .n = dh, .k = t, .alpha = 1, .beta = 0, .a = dS, .lda = t, .stride_a = t * t,
			      .b = b->k, .ldb = dh, .stride_b = t * dh, .c = dq, .ldc = dh, .stride_c = t * dh,
			      .batch = B * h };
	if (st->ops->gemm(st->streams[i], &g, err) < 0)
		return -1;
	g = (struct hb_gemm){ .trans_a = 1, .m = t, .n = dh, .k = t, .alpha = 1, .beta = 0, .a = dS, .lda = t,
			      .stride_a = t * t, .b = b->q, .ldb = dh, .stride_b = t * dh, .c = dk, .ldc = dh,
			      .stride_c = t * dh, .batch = B * h };
	if (st->ops->gemm(st->streams[i], &g, err) < 0)
		return -1;
	if (!dx)
		return 0;
	return kern(st, i, (struct hb_kernel){ .op = HB_K_MERGE_HEADS, .y = dx, .x = dq, .z = dk, .w = dv,
						.rows = B, .cols = t, .ld = h, .taps = dh }, err);
}

/* dy is the gradient of the outputs [B][T][H]; recurrent terms are added
 * into it in place, step by step from the end. */
static int lstm_bwd(struct hb_wl_state *st, int i, const struct hb_wl_layer *L, struct wl_layer_buf *b,
		    const float *W, float *dW, float *dy, float *dx, int accumulate, struct hb_error *err)
{
	long B = st->B, T = L->tokens, in = L->in, H = L->out;
	const float *Wx = W, *Wh = W + in * 4 * H;
	float *dWx = dW, *dWh = dW + in * 4 * H, *dc = st->vsw[i].scratch;

	if ((!accumulate && fill(st, i, dW, 4 * H * (in + H), 0.0f, err) < 0) || fill(st, i, dc, B * H, 0.0f, err) < 0)
		return -1;
	for (long t = T - 1; t >= 0; t--) {
		float *gt = b->gates + t * B * 4 * H;

		if (kern(st, i, (struct hb_kernel){ .op = HB_K_LSTM_CELL_BWD, .y = gt, .z = dc, .w = dy + t * H,
						     .x = t > 0 ? b->cell + (t - 1) * B * H : NULL,
						     .v = b->cell + t * B * H, .rows = B, .cols = H, .ld = T * H },
			 err) < 0)
			return -1;
		if (gemm(st, i, 1, 0, in, 4 * H, B, b->x + t * in, T * in, gt, 4 * H, 1.0f, dWx, 4 * H, err) < 0)
			return -1;
		if (t > 0 &&
		    (gemm(st, i, 1, 0, H, 4 * H, B, b->y + (t - 1) * H, T * H, gt, 4 * H, 1.0f, dWh, 4 * H, err) < 0 ||
		     gemm(st, i, 0, 1, B, H, 4 * H, gt, 4 * H, Wh, 4 * H, 1.0f, dy + (t - 1) * H, T * H, err) < 0))
			return -1;
		if (dx && gemm(st, i, 0, 1, B, in, 4 * H, gt, 4 * H, Wx, 4 * H, 0.0f, dx + t * in, T * in, err) < 0)
			return -1;
	}
	return 0;
}

int hb_wl_backward(struct hb_wl_state *st, int i, struct hb_error *err)
{
	return hb_wl_backward_acc(st, i, 0, err);
}

int hb_wl_backward_acc(struct hb_wl_state *st, int i, int accumulate, struct hb_error *err)
{
	return hb_wl_backward_hooked(st, i, accumulate, NULL, NULL, err);
}

int hb_wl_backward_hooked(struct hb_wl_state *st, int i, int accumulate, hb_wl_grad_ready_fn *ready, void *arg,
			  struct hb_error *err)
{
	const float wbeta = accumulate ? 1.0f : 0.0f;
	const struct hb_workload *w = st->w;
	struct wl_vsw *v = &st->vsw[i];
	const struct hb_wl_layer *last = &w->layers[w->nlayers - 1];
	long B = st->B, nout = B * out_size(last);
	float *dy = v->g0, *dx = v->g1;

	if (kern(st, i, (struct hb_kernel){ .op = HB_K_MSE_GRAD, .z = dy, .y = v->lb[w->nlayers - 1].y,
					     .x = v->target, .n = nout, .a = 1.0f / (float)nout }, err) < 0)
		return -1;
	for (int l = w->nlayers - 1; l >= 0; l--) {
		const struct hb_wl_layer *L = &w->layers[l];
		struct wl_layer_buf *b = &v->lb[l];
		const float *W = v->w + st->woff[l];
		float *dW = v->g + st->woff[l];
		float *dxl = l > 0 ? dx : NULL;
		long rows = B * L->tokens;
		int rc = 0;

		if (L->relu && kern(st, i, (struct hb_kernel){ .op = HB_K_RELU_BWD, .z = dy, .x = dy, .y = b->y,
							       .n = rows * L->out }, err) < 0)
			return -1;
		switch (L->kind) {
		case HB_WL_DENSE:
			rc = gemm(st, i, 1, 0, L->in, L->out, rows, b->x, L->in, dy, L->out, wbeta, dW, L->out, err);
			if (rc == 0 && dxl)
				rc = gemm(st, i, 0, 1, rows, L->in, L->out, dy, L->out, W, L->out, 0.0f, dxl, L->in, err);
			break;
		case HB_WL_CONV: {
			long K = L->in * L->taps;
			float *dcol = v->scratch;

			rc = gemm(st, i, 1, 0, K, L->out, rows, b->col, K, dy, L->out, wbeta, dW, L->out, err);
			if (rc == 0 && dxl)
				rc = gemm(st, i, 0, 1, rows, K, L->out, dy, L->out, W, L->out, 0.0f, dcol, K, err);
			if (rc == 0 && dxl)
				rc = kern(st, i, (struct hb_kernel){ .op = HB_K_COL2IM, .y = dxl, .x = dcol, .rows = B,
								     .cols = L->tokens, .ld = L->in, .taps = L->taps },
					  err);
			break;
		}
		case HB_WL_ATTENTION:
			rc = attention_bwd(st, i, L, b, dy, dxl, err);
			break;
		case HB_WL_LSTM:
			rc = lstm_bwd(st, i, L, b, W, dW, dy, dxl, accumulate, err);
			break;
		case HB_WL_EMBEDDING:
			rc = accumulate ? 0 : fill(st, i, dW, layer_params(L), 0.0f, err);
			if (rc == 0)
				rc = kern(st, i, (struct hb_kernel){ .op = HB_K_SCATTER_ADD_ROWS, .y = dW, .x = dy,
								     .idx = v->idx, .rows = rows, .cols = L->out }, err);
			break;
		}
		if (rc < 0)
			return -1;
		/* Layer l's weight gradient is the last write to offsets >= woff[l]
		 * (layers fill the buffer from the end; layer 0 also closes the
		 * padding before it, if any). */
		if (ready && ready(arg, i, l == 0 ? 0 : st->woff[l], err) != 0)
			return -1;
		if (!dxl)
			break;
		if (L->residual && axpy(st, i, dxl, dy, rows * L->out, 1.0f, err) < 0)
			return -1;
		/* dxl is the gradient of this layer's input; the previous
		 * layer's output gradient is it, or its resize adjoint. */
		if (v->lb[l - 1].resize_after) {
			if (kern(st, i, (struct hb_kernel){ .op = HB_K_RESIZE_BWD, .y = dy, .x = dxl, .rows = B,
							     .cols = in_size(L), .ld = out_size(&w->layers[l - 1]) },
				 err) < 0)
				return -1;
		} else {
			float *t = dy;

			dy = dx;
			dx = t;
		}
	}
	return 0;
}

long hb_wl_param_offset(const struct hb_wl_state *st, int layer)
{
	return layer >= 0 && layer < st->w->nlayers ? st->woff[layer] : -1;
}

long hb_wl_param_floats(const struct hb_wl_state *st)
{
	const struct hb_workload *w = st->w;

	return st->woff[w->nlayers - 1] + round_up(layer_params(&w->layers[w->nlayers - 1]));
}


int hb_wl_aggregate(struct hb_wl_state *st, struct hb_error *err)
{
	long n = hb_wl_param_floats(st);

	for (int i = 1; i < st->n; i++)
		if (axpy(st, 0, st->vsw[0].g, st->vsw[i].g, n, 1.0f, err) < 0)
			return -1;
	return 0;
}

int hb_wl_update(struct hb_wl_state *st, struct hb_error *err)
{
	const struct hb_workload *w = st->w;
	long n = hb_wl_param_floats(st);
	struct hb_kernel k = { .y = st->vsw[0].w, .x = st->vsw[0].g, .z = st->m1, .n = n };

	if (st->n > 1 && kern(st, 0, (struct hb_kernel){ .op = HB_K_SCALE, .y = st->vsw[0].g, .n = n,
							  .a = 1.0f / (float)st->n }, err) < 0)
		return -1;
	st->step++;
	if (w->optimizer == HB_WL_ADAM) {
		k.op = HB_K_ADAM;
		k.w = st->m2;
		k.a = (float)w->lr;
		k.b = (float)w->beta1;
		k.c = (float)w->beta2;
		k.d = (float)w->eps;
		k.e = (float)w->weight_decay;
		k.step = st->step;
	} else {
		k.op = HB_K_SGD_MOMENTUM;
		k.a = (float)w->lr;
		k.b = (float)w->momentum;
		k.c = (float)w->weight_decay;
	}
	return kern(st, 0, k, err);
}

int hb_wl_aggregate_range(struct hb_wl_state *st, struct hb_stream *s, long off, long n, struct hb_error *err)
{
	if (!s)
		s = st->streams[0];
	if (off < 0 || n < 0 || off + n > hb_wl_param_floats(st))
		return hb_input_error(err, "workload %s: aggregation of [%ld, %ld) outside [0, %ld)", st->w->model, off,
				      off + n, hb_wl_param_floats(st));
	for (int i = 1; i < st->n; i++)
		if (st->ops->kernel(s, &(struct hb_kernel){ .op = HB_K_AXPY, .y = st->vsw[0].g + off,
							    .x = st->vsw[i].g + off, .n = n, .a = 1.0f },
				    err) < 0)
			return -1;
	return 0;
}

int hb_wl_update_range(struct hb_wl_state *st, long off, long n, float grad_scale, long step, struct hb_error *err)
{
	return hb_wl_update_range_on(st, NULL, off, n, grad_scale, step, err);
}

int hb_wl_update_range_on(struct hb_wl_state *st, struct hb_stream *s, long off, long n, float grad_scale, long step,
			  struct hb_error *err)
{
	const struct hb_workload *w = st->w;
	struct hb_kernel k = { .y = st->vsw[0].w + off, .x = st->vsw[0].g + off, .z = st->m1 + off, .n = n };

	if (!s)
		s = st->streams[0];
	if (off < 0 || n < 0 || off + n > hb_wl_param_floats(st) || step < 1)
		return hb_input_error(err, "workload %s: update of [%ld, %ld) at step %ld outside [0, %ld)", w->model,
				      off, off + n, step, hb_wl_param_floats(st));
	if (grad_scale != 1.0f &&
	    st->ops->kernel(s, &(struct hb_kernel){ .op = HB_K_SCALE, .y = st->vsw[0].g + off, .n = n, .a = grad_scale },
			    err) < 0)
		return -1;
	if (w->optimizer == HB_WL_ADAM) {
		k.op = HB_K_ADAM;
		k.w = st->m2 + off;
		k.a = (float)w->lr;
		k.b = (float)w->beta1;
		k.c = (float)w->beta2;
		k.d = (float)w->eps;
		k.e = (float)w->weight_decay;
		k.step = step;
	} else {
		k.op = HB_K_SGD_MOMENTUM;
		k.a = (float)w->lr;
		k.b = (float)w->momentum;
		k.c = (float)w->weight_decay;
	}
	if (st->ops->kernel(s, &k, err) < 0)
		return -1;
	if (step > st->step)
		st->step = step;
	return 0;
}

void hb_wl_set_data_seed(struct hb_wl_state *st, uint64_t seed)
{
	drop_batches(st);
	st->data_seed = seed;
}

long hb_wl_step(const struct hb_wl_state *st)
{
	return st->step;
}

void hb_wl_set_step(struct hb_wl_state *st, long step)
{
	st->step = step;
}

float *hb_wl_grads_device(struct hb_wl_state *st, int vsw)
{
	return vsw >= 0 && vsw < st->n ? st->vsw[vsw].g : NULL;
}

long hb_wl_opt_floats(const struct hb_wl_state *st)
{
	return (st->w->optimizer == HB_WL_ADAM ? 2 : 1) * hb_wl_param_floats(st);
}

/* The optimizer state as one host array: momentum, or Adam's m then v. */
static int copy_opt(struct hb_wl_state *st, float *out, const float *in, size_t nfloats, struct hb_error *err)
{
	long n = hb_wl_param_floats(st);
	float *parts[2] = { st->m1, st->m2 };
	int nparts = st->m2 ? 2 : 1;

	if ((long)nfloats != nparts * n)
		return hb_input_error(err, "workload %s: optimizer state is %ld floats, not %zu", st->w->model,
				      nparts * n, nfloats);
	for (int p = 0; p < nparts; p++)
		if (in ? st->ops->memcpy_h2d(st->streams[0], parts[p], in + p * n, (size_t)n * 4, err) < 0
		       : st->ops->memcpy_d2h(st->streams[0], out + p * n, parts[p], (size_t)n * 4, err) < 0)
			return -1;
	return st->ops->stream_sync(st->streams[0], err);
}

int hb_wl_read_opt_state(struct hb_wl_state *st, float *host, size_t nfloats, struct hb_error *err)
{
	return copy_opt(st, host, NULL, nfloats, err);
}

int hb_wl_write_opt_state(struct hb_wl_state *st, const float *host, size_t nfloats, struct hb_error *err)
{
	return copy_opt(st, NULL, host, nfloats, err);
}

int hb_wl_copy(struct hb_wl_state *st, int i, struct hb_error *err)
{
	if (i <= 0 || i >= st->n)
		return 0;
	return st->ops->memcpy_d2d(st->streams[i], st->vsw[i].w, st->vsw[0].w, (size_t)hb_wl_param_floats(st) * 4, err);
}


static int copy_params(struct hb_wl_state *st, int i, float *host, const float *src_host, int grads,
		       size_t nfloats, struct hb_error *err)
{
	size_t n = (size_t)hb_wl_param_floats(st);
	float *dev;

	if (i < 0 || i >= st->n)
		return hb_input_error(err, "workload: no VSW %d", i);
	dev = grads ? st->vsw[i].g : st->vsw[i].w;
	if (nfloats < n)
		n = nfloats;
	if (src_host ? st->ops->memcpy_h2d(st->streams[i], dev, src_host, n * 4, err) < 0
		     : st->ops->memcpy_d2h(st->streams[i], host, dev, n * 4, err) < 0)
		return -1;
	return st->ops->stream_sync(st->streams[i], err);
}

int hb_wl_read_weights(struct hb_wl_state *st, int i, float *host, size_t nfloats, struct hb_error *err)
{
	return copy_params(st, i, host, NULL, 0, nfloats, err);
}

int hb_wl_write_weights(struct hb_wl_state *st, int i, const float *host, size_t nfloats, struct hb_error *err)
{
	return copy_params(st, i, NULL, host, 0, nfloats, err);
}

int hb_wl_read_grads(struct hb_wl_state *st, int i, float *host, size_t nfloats, struct hb_error *err)
{
	return copy_params(st, i, host, NULL, 1, nfloats, err);
}

int hb_wl_loss(struct hb_wl_state *st, int i, double *loss, struct hb_error *err)
{
	const struct hb_workload *w = st->w;
	struct wl_vsw *v = &st->vsw[i];
	long n = st->B * out_size(&w->layers[w->nlayers - 1]);
	float *y = malloc((size_t)n * 8);
	double sum = 0;

	if (!y)
		return hb_runtime_error(err, "workload: out of host memory");
	if (st->ops->memcpy_d2h(st->streams[i], y, v->lb[w->nlayers - 1].y, (size_t)n * 4, err) < 0 ||
	    st->ops->memcpy_d2h(st->streams[i], y + n, v->target, (size_t)n * 4, err) < 0 ||
	    st->ops->stream_sync(st->streams[i], err) < 0) {
		free(y);
		return -1;
	}
	for (long j = 0; j < n; j++)
		sum += 0.5 * (double)(y[j] - y[n + j]) * (double)(y[j] - y[n + j]);
	free(y);
	*loss = sum / (double)n;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Tasks (workload.h)                                                       */

#define CALIB_SAMPLES 64                       /* the teacher's calibration set */
#define TAG_TEACHER 0x7465616368657221ull      /* "teacher!": its weights' seed */
#define TAG_CALIB 0x63616c6962726174ull        /* "calibrat": its calibration inputs */
#define TAG_NOISE 0x6c6162656c6e6f69ull        /* "labelnoi": label noise of a batch */

/* SplitMix64's finaliser: seeds of batches and samples from their indices. */
static uint64_t mix64(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Batch b of VSW i: a function of (data seed, i, b) only. */
static uint64_t batch_seed(const struct hb_wl_state *st, int i, long b)
{
	return mix64(mix64(st->data_seed ^ mix64((uint64_t)i)) ^ (uint64_t)b);
}

/* Per sample: layer 0's input and the last layer's output, in values. */
static long sample_in(const struct hb_wl_state *st)
{
	return in_size(&st->w->layers[0]);
}

static long sample_out(const struct hb_wl_state *st)
{
	return out_size(&st->w->layers[st->w->nlayers - 1]);
}

static void drop_batches(struct hb_wl_state *st)
{
	for (int i = 0; i < st->n; i++) {
		struct wl_vsw *v = &st->vsw[i];

		free(v->host[0]);
		free(v->host[1]);
		v->host[0] = v->host[1] = NULL;
		for (int k = 0; k < v->cap_staged; k++) {
			free(v->staged[k].h);
			v->staged[k].h = NULL;
		}
		v->nstaged = 0;
	}
}

static void teacher_free(struct hb_wl_state *st)
{
	struct wl_teacher *T = st->teacher;

	if (!T)
		return;
	if (T->net) {
		st->bytes -= hb_wl_state_bytes(T->net);
		hb_wl_state_free(T->net);
	}
	if (T->streams[0])
		st->ops->stream_destroy(T->streams[0]);
	pthread_mutex_destroy(&T->mu);
	free(T->out);
	free(T);
	st->teacher = NULL;
}

/* One teacher forward: B samples of inputs in, outputs to out (host). */
static int teacher_forward(struct hb_wl_state *st, const void *in, float *out, struct hb_error *err)
{
	struct wl_teacher *T = st->teacher;
	struct hb_wl_state *net = T->net;
	struct wl_vsw *nv = &net->vsw[0];
	struct hb_stream *s = T->streams[0];

	if (st->ops->memcpy_h2d(s, nv->lb[0].x, in, (size_t)(st->B * sample_in(st)) * 4, err) < 0 ||
	    hb_wl_forward(net, 0, err) < 0 ||
	    st->ops->memcpy_d2h(s, out, nv->lb[st->w->nlayers - 1].y, (size_t)(st->B * sample_out(st)) * 4, err) < 0)
		return -1;
	return st->ops->stream_sync(s, err);
}

/* gain = 1 / RMS of the teacher's outputs over CALIB_SAMPLES samples, each
 * drawn from (teacher seed, sample index) alone, so the gain does not
 * depend on the local batch or the data seed. */
static int teacher_calibrate(struct hb_wl_state *st, uint64_t teacher_seed, struct hb_error *err)
{
	struct wl_teacher *T = st->teacher;
	const struct hb_wl_layer *first = &st->w->layers[0];
	long nin = sample_in(st), nout = sample_out(st);
	uint64_t base = mix64(teacher_seed ^ TAG_CALIB);
	float *in = malloc((size_t)(st->B * nin) * 4);
	double sum = 0;
	int rc = 0;

	if (!in)
		return hb_runtime_error(err, "workload %s: out of host memory", st->w->model);
	for (long k0 = 0; k0 < CALIB_SAMPLES && rc == 0; k0 += st->B) {
		for (long s = 0; s < st->B; s++)
			fill_inputs(first, mix64(base ^ (uint64_t)(k0 + s)), in + s * nin, nin);
		rc = teacher_forward(st, in, T->out, err);
		for (long s = 0; s < st->B && k0 + s < CALIB_SAMPLES && rc == 0; s++)
			for (long j = 0; j < nout; j++)
				sum += (double)T->out[s * nout + j] * (double)T->out[s * nout + j];
	}
	free(in);
	if (rc < 0)
		return -1;
	if (!(sum > 0) || !isfinite(sum))
		return hb_runtime_error(err, "workload %s: the teacher's outputs on its calibration set are %s",
					st->w->model, sum > 0 ? "not finite" : "all zero");
	T->gain = 1.0 / sqrt(sum / ((double)CALIB_SAMPLES * (double)nout));
	return 0;
}

int hb_wl_set_task(struct hb_wl_state *st, enum hb_wl_task task, double sigma, uint64_t teacher_seed,
		   struct hb_error *err)
{
	struct wl_teacher *T;
	int rc;

	if (task != HB_WL_TASK_FIXED && task != HB_WL_TASK_TEACHER)
		return hb_input_error(err, "workload %s: unknown task %d", st->w->model, (int)task);
	if (task == HB_WL_TASK_TEACHER && (!(sigma >= 0) || !isfinite(sigma)))
		return hb_input_error(err, "workload %s: label noise sigma %g must be finite and >= 0", st->w->model,
				      sigma);
	teacher_free(st);
	drop_batches(st);
	st->task = HB_WL_TASK_FIXED;
	if (task == HB_WL_TASK_FIXED)
		return 0;
	T = calloc(1, sizeof(*T));
	if (!T)
		return hb_runtime_error(err, "workload: out of host memory");
	pthread_mutex_init(&T->mu, NULL);
	st->teacher = T;
	T->sigma = sigma;
	T->out = malloc((size_t)(st->B * sample_out(st)) * 4);
	if (!T->out) {
		teacher_free(st);
		return hb_runtime_error(err, "workload: out of host memory");
	}
	if (st->ops->stream_create(st->dev, &T->streams[0], err) < 0) {
		teacher_free(st);
		return -1;
	}
	/* the seed is mixed, so no teacher_seed gives the student's weights */
	rc = state_create(st->ops, st->dev, st->w, st->B, 1, T->streams, mix64(teacher_seed ^ TAG_TEACHER), 0,
			  &T->net, err);
	if (rc == 0) {
		st->bytes += hb_wl_state_bytes(T->net);
		rc = teacher_calibrate(st, teacher_seed, err);
	}
	if (rc != 0) {
		teacher_free(st);
		return rc;
	}
	st->task = HB_WL_TASK_TEACHER;
	return 0;
}

enum hb_wl_task hb_wl_task(const struct hb_wl_state *st)
{
	return st->task;
}

/* Batch b of VSW i of the teacher task into h (inputs then targets). */
static int make_teacher_batch(struct hb_wl_state *st, int i, long b, char *h, struct hb_error *err)
{
	struct wl_teacher *T = st->teacher;
	long nin = st->B * sample_in(st), ntg = st->B * sample_out(st);
	uint64_t seed = batch_seed(st, i, b);
	float *tg = (float *)(h + (size_t)nin * 4);
	struct hb_rng noise;
	int rc;

	fill_inputs(&st->w->layers[0], seed, h, nin);
	hb_rng_seed(&noise, mix64(seed ^ TAG_NOISE), 0);
	pthread_mutex_lock(&T->mu);
	rc = teacher_forward(st, h, T->out, err);
	if (rc == 0)
		for (long j = 0; j < ntg; j++)
			tg[j] = (float)(T->gain * T->out[j] + (T->sigma > 0 ? T->sigma * hb_rng_normal(&noise) : 0.0));
	pthread_mutex_unlock(&T->mu);
	return rc;
}

static void set_batch_bytes(struct hb_wl_state *st, struct wl_vsw *v)
{
	v->host_in_bytes = (size_t)(st->B * sample_in(st)) * 4;
	v->host_tgt_bytes = (size_t)(st->B * sample_out(st)) * 4;
}

/* The host copy of batch b of VSW i: staged, or made now into host[0]. */
static const void *teacher_batch(struct hb_wl_state *st, int i, long b, struct hb_error *err)
{
	struct wl_vsw *v = &st->vsw[i];

	for (int k = 0; k < v->nstaged; k++)
		if (v->staged[k].batch == b)
			return v->staged[k].h;
	set_batch_bytes(st, v);
	if (!v->host[0] && !(v->host[0] = malloc(v->host_in_bytes + v->host_tgt_bytes))) {
		hb_runtime_error(err, "workload %s: out of host memory for the data batches", st->w->model);
		return NULL;
	}
	return make_teacher_batch(st, i, b, v->host[0], err) < 0 ? NULL : v->host[0];
}

int hb_wl_prefetch(struct hb_wl_state *st, long first, int count, struct hb_error *err)
{
	if (st->task != HB_WL_TASK_TEACHER)
		return 0;
	if (count < 0 || first < 0)
		return hb_input_error(err, "workload %s: prefetch of %d batches from %ld", st->w->model, count, first);
	for (int i = 0; i < st->n; i++) {
		struct wl_vsw *v = &st->vsw[i];

		v->nstaged = 0;
		set_batch_bytes(st, v);
		if (count > v->cap_staged) {
			struct wl_staged *p = realloc(v->staged, (size_t)count * sizeof(*p));

			if (!p)
				return hb_runtime_error(err, "workload: out of host memory");
			memset(p + v->cap_staged, 0, (size_t)(count - v->cap_staged) * sizeof(*p));
			v->staged = p;
			v->cap_staged = count;
		}
		for (int k = 0; k < count; k++) {
			struct wl_staged *sb = &v->staged[k];

			if (!sb->h && !(sb->h = malloc(v->host_in_bytes + v->host_tgt_bytes)))
				return hb_runtime_error(err, "workload %s: out of host memory for the data batches",
							st->w->model);
			sb->batch = first + k;
			if (make_teacher_batch(st, i, sb->batch, sb->h, err) < 0)
				return -1;
			v->nstaged = k + 1;
		}
	}
	return 0;
}

int hb_wl_read_batch(struct hb_wl_state *st, int i, void *inputs, float *targets, struct hb_error *err)
{
	struct wl_vsw *v;

	if (i < 0 || i >= st->n)
		return hb_input_error(err, "workload: no VSW %d", i);
	v = &st->vsw[i];
	if ((inputs && st->ops->memcpy_d2h(st->streams[i], inputs, v->lb[0].x, (size_t)(st->B * sample_in(st)) * 4,
					   err) < 0) ||
	    (targets && st->ops->memcpy_d2h(st->streams[i], targets, v->target,
					    (size_t)(st->B * sample_out(st)) * 4, err) < 0))
		return -1;
	return st->ops->stream_sync(st->streams[i], err);
}
