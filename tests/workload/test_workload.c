#include <stdio.h>
/*
 * test_workload.c: the synthetic-step executor (profiler/workload.c) on the
 * cpu backend.
 *
 * The gradients are checked against central finite differences of the
 * loss for every layer kind (dense, conv with im2col, attention, LSTM,
 * embedding), through resizes and residuals, so "real gradients" is a
 * tested claim.  Also: the local aggregation sums the VSWs' gradients,
 * the weight copy makes every VSW equal the main one, SGD and Adam lower
 * the loss on a fixed batch, and HB_DEV_NOMEM leaves nothing allocated.
 * Task TEACHER: a student learns a teacher network from fresh seeded
 * batches (held-out loss below half its initial value in 100 steps), the
 * label noise sets a floor of sigma^2 / 2, batches are a deterministic
 * function of (data seed, VSW, batch index), and the teacher's memory
 * counts.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device.h"
#include "workload.h"
#include "wl_specs.h"     /* defines: L_dense, finish_spec, spec_transformer, spec_cnn, spec_lstm */

static const struct hb_device_ops *ops = &hb_device_cpu;

struct rig {
	struct hb_device *dev;
	struct hb_stream *s[4];
	struct hb_wl_state *st;
	int n;
};

static void rig_open(struct rig *r, const struct hb_workload *w, int B, int n, double budget)
{
	struct hb_device_config cfg = { .mem_limit_bytes = budget };
	struct hb_error err = { 0 };

	memset(r, 0, sizeof(*r));
	r->n = n;
	assert_int_equal(ops->open(&cfg, &r->dev, &err), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(ops->stream_create(r->dev, &r->s[i], &err), 0);
	assert_int_equal(hb_wl_state_create(ops, r->dev, w, B, n, r->s, 7, &r->st, &err), 0);
}

static void rig_close(struct rig *r)
{
	hb_wl_state_free(r->st);
	for (int i = 0; i < r->n; i++)
		ops->stream_destroy(r->s[i]);
	ops->close(r->dev);
}

static double loss_now(struct rig *r)
{
	struct hb_error err = { 0 };
	double loss;

	assert_int_equal(hb_wl_forward(r->st, 0, &err), 0);
	assert_int_equal(hb_wl_loss(r->st, 0, &loss, &err), 0);
	return loss;
}

/* Every parameter of a small spec: analytic gradient vs central
 * differences.  float32 throughout, so the tolerance is loose but far
 * tighter than any wrong gradient (sign, missing term, wrong layout). */
static void check_gradients(const struct hb_workload *w)
{
	struct rig r;
	struct hb_error err = { 0 };
	long np;
	float *wt, *g;
	double gmax = 0, worst = 0;
	int checked = 0;

	rig_open(&r, w, 2, 1, 64e6);
	np = hb_wl_param_floats(r.st);
	wt = malloc((size_t)np * sizeof(float));
	g = malloc((size_t)np * sizeof(float));
	assert_int_equal(hb_wl_data(r.st, 0, 0, &err), 0);
	(void)loss_now(&r);
	assert_int_equal(hb_wl_backward(r.st, 0, &err), 0);
	assert_int_equal(hb_wl_read_grads(r.st, 0, g, (size_t)np, &err), 0);
	assert_int_equal(hb_wl_read_weights(r.st, 0, wt, (size_t)np, &err), 0);
	for (long j = 0; j < np; j++)
		gmax = fmax(gmax, fabs(g[j]));
	assert_true(gmax > 0);
	for (int l = 0; l < w->nlayers; l++) {
		long off = hb_wl_param_offset(r.st, l), cnt = (long)w->layers[l].params;

		for (long j = off; j < off + cnt; j += (cnt > 12 ? cnt / 12 : 1)) {
			const float h = 1e-2f;
			float keep = wt[j];
			double lp, lm, fd;

			wt[j] = keep + h;
			assert_int_equal(hb_wl_write_weights(r.st, 0, wt, (size_t)np, &err), 0);
			lp = loss_now(&r);
			wt[j] = keep - h;
			assert_int_equal(hb_wl_write_weights(r.st, 0, wt, (size_t)np, &err), 0);
			lm = loss_now(&r);
			wt[j] = keep;
			fd = (lp - lm) / (2 * h);
			if (fabs(fd - g[j]) > worst)
				worst = fabs(fd - g[j]);
			if (fabs(fd - g[j]) > 0.03 * gmax + 0.05 * fabs(fd))
				fail_msg("%s layer %s param %ld: backward %g, finite difference %g (max |g| %g)",
					 w->model, w->layers[l].name, j - off, (double)g[j], fd, gmax);
			checked++;
		}
	}
	assert_true(checked > 10);
	free(wt);
	free(g);
	rig_close(&r);
}

static void test_grad_transformer(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];

	(void)state;
	spec_transformer(&w, ls);
	check_gradients(&w);
}

static void test_grad_cnn(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];

	(void)state;
	spec_cnn(&w, ls);
	check_gradients(&w);
}

static void test_grad_lstm(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];

	(void)state;
	spec_lstm(&w, ls);
	check_gradients(&w);
}

/* Aggregation sums the VSWs' gradients into the main one; the update
 * changes the main weights; the copy makes every VSW equal to it. */
static void test_aggregate_update_copy(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_error err = { 0 };
	struct rig r;
	long np;
	float *g[3], *w0, *w1, *sum;

	(void)state;
	spec_cnn(&w, ls);
	rig_open(&r, &w, 3, 3, 64e6);
	np = hb_wl_param_floats(r.st);
	sum = calloc((size_t)np, sizeof(float));
	w0 = malloc((size_t)np * sizeof(float));
	w1 = malloc((size_t)np * sizeof(float));
	for (int i = 0; i < 3; i++) {
		g[i] = malloc((size_t)np * sizeof(float));
		assert_int_equal(hb_wl_data(r.st, i, i, &err), 0);
		assert_int_equal(hb_wl_forward(r.st, i, &err), 0);
		assert_int_equal(hb_wl_backward(r.st, i, &err), 0);
		assert_int_equal(hb_wl_read_grads(r.st, i, g[i], (size_t)np, &err), 0);
		for (long j = 0; j < np; j++)
			sum[j] += g[i][j];
	}
	/* different data per VSW: different gradients */
	assert_true(memcmp(g[0], g[1], (size_t)np * sizeof(float)) != 0);
	assert_int_equal(hb_wl_aggregate(r.st, &err), 0);
	assert_int_equal(hb_wl_read_grads(r.st, 0, g[0], (size_t)np, &err), 0);
	for (long j = 0; j < np; j++)
		assert_float_equal(g[0][j], sum[j], 1e-5 * (1 + fabs(sum[j])));
	assert_int_equal(hb_wl_read_weights(r.st, 1, w1, (size_t)np, &err), 0);
	assert_int_equal(hb_wl_update(r.st, &err), 0);
	assert_int_equal(hb_wl_read_weights(r.st, 0, w0, (size_t)np, &err), 0);
	assert_true(memcmp(w0, w1, (size_t)np * sizeof(float)) != 0);
	for (int i = 1; i < 3; i++) {
		assert_int_equal(hb_wl_copy(r.st, i, &err), 0);
		assert_int_equal(hb_wl_read_weights(r.st, i, w1, (size_t)np, &err), 0);
		assert_memory_equal(w0, w1, (size_t)np * sizeof(float));
	}
	for (int i = 0; i < 3; i++)
		free(g[i]);
	free(sum);
	free(w0);
	free(w1);
	rig_close(&r);
}

/* What the hook of hb_wl_backward_hooked sees: at each call, the gradient
 * at offsets >= lo already holds its final value. */
struct hook_check {
	struct hb_wl_state *st;
	const float *final;      /* the gradient of a plain backward */
	float *now;              /* scratch */
	long np, last_lo;
	int calls, stop_at;      /* stop_at > 0: fail that call */
};

static int hook_check(void *arg, int vsw, long lo, struct hb_error *err)
{
	struct hook_check *h = arg;

	assert_int_equal(vsw, 0);
	assert_true(lo >= 0 && lo <= h->last_lo);
	h->last_lo = lo;
	if (++h->calls == h->stop_at)
		return hb_runtime_error(err, "stop here");
	assert_int_equal(hb_wl_read_grads(h->st, 0, h->now, (size_t)h->np, err), 0);
	for (long j = lo; j < h->np; j++)
		if (h->now[j] != h->final[j])
			fail_msg("gradient %ld (lo %ld) is %g before backward ends, %g after", j, lo, (double)h->now[j],
				 (double)h->final[j]);
	return 0;
}

static void check_hooked(struct hb_workload *w)
{
	struct hb_error err = { 0 };
	struct rig r;
	struct hook_check h = { 0 };
	float *g1, *agg;
	long np, half;

	rig_open(&r, w, 2, 2, 64e6);
	np = hb_wl_param_floats(r.st);
	h = (struct hook_check){ .st = r.st, .np = np, .last_lo = np };
	h.final = g1 = malloc((size_t)np * 4);
	h.now = malloc((size_t)np * 4);
	agg = malloc((size_t)np * 4);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(hb_wl_data(r.st, i, i, &err), 0);
		assert_int_equal(hb_wl_forward(r.st, i, &err), 0);
	}
	assert_int_equal(hb_wl_backward(r.st, 0, &err), 0);
	assert_int_equal(hb_wl_read_grads(r.st, 0, g1, (size_t)np, &err), 0);
	/* the same pass again (backward may consume the forward's buffers),
	 * hooked: every call sees its part final */
	assert_int_equal(hb_wl_forward(r.st, 0, &err), 0);
	assert_int_equal(hb_wl_backward_hooked(r.st, 0, 0, hook_check, &h, &err), 0);
	assert_true(h.calls >= 2);
	assert_int_equal(h.last_lo, 0);
	/* a hook's failure stops backward */
	h.calls = 0;
	h.last_lo = np;
	h.stop_at = 2;
	assert_int_equal(hb_wl_forward(r.st, 0, &err), 0);
	assert_int_equal(hb_wl_backward_hooked(r.st, 0, 0, hook_check, &h, &err), -1);
	assert_string_equal(err.msg, "stop here");
	assert_int_equal(h.calls, 2);
	/* aggregation by two slices equals the whole aggregation */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(hb_wl_forward(r.st, i, &err), 0);
		assert_int_equal(hb_wl_backward(r.st, i, &err), 0);
	}
	assert_int_equal(hb_wl_aggregate(r.st, &err), 0);
	assert_int_equal(hb_wl_read_grads(r.st, 0, agg, (size_t)np, &err), 0);
	assert_int_equal(hb_wl_forward(r.st, 0, &err), 0);
	assert_int_equal(hb_wl_backward(r.st, 0, &err), 0);
	half = np / 2 + 3;
	assert_int_equal(hb_wl_aggregate_range(r.st, NULL, half, np - half, &err), 0);
	assert_int_equal(hb_wl_aggregate_range(r.st, r.s[1], 0, half, &err), 0);
	assert_int_equal(hb_wl_read_grads(r.st, 0, h.now, (size_t)np, &err), 0);
	assert_memory_equal(agg, h.now, (size_t)np * 4);
	assert_int_equal(hb_wl_aggregate_range(r.st, NULL, np - 2, 3, &err), -1);
	free(g1);
	free(h.now);
	free(agg);
	rig_close(&r);
}

static void test_backward_hooked(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];

	(void)state;
	spec_cnn(&w, ls);
	check_hooked(&w);
	spec_transformer(&w, ls);
	check_hooked(&w);
	spec_lstm(&w, ls);
	check_hooked(&w);
}

/* Gradient accumulation: backward on batch 0, then accumulating backward
 * on batch 1, equals the sum of the two separate gradients; the update of
 * a slice changes only that slice. */
static void check_accumulation(struct hb_workload *w)
{
	struct hb_error err = { 0 };
	struct rig r;
	long np;
	float *g0, *g1, *gsum, *wb, *wa;

	rig_open(&r, w, 2, 1, 64e6);
	np = hb_wl_param_floats(r.st);
	g0 = malloc((size_t)np * 4);
	g1 = malloc((size_t)np * 4);
	gsum = malloc((size_t)np * 4);
	wb = malloc((size_t)np * 4);
	wa = malloc((size_t)np * 4);
	for (int b = 0; b < 2; b++) {
		assert_int_equal(hb_wl_data(r.st, 0, b, &err), 0);
		assert_int_equal(hb_wl_forward(r.st, 0, &err), 0);
		assert_int_equal(hb_wl_backward(r.st, 0, &err), 0);
		assert_int_equal(hb_wl_read_grads(r.st, 0, b ? g1 : g0, (size_t)np, &err), 0);
	}
	assert_int_equal(hb_wl_data(r.st, 0, 0, &err), 0);
	assert_int_equal(hb_wl_forward(r.st, 0, &err), 0);
	assert_int_equal(hb_wl_backward_acc(r.st, 0, 0, &err), 0);
	assert_int_equal(hb_wl_data(r.st, 0, 1, &err), 0);
	assert_int_equal(hb_wl_forward(r.st, 0, &err), 0);
	assert_int_equal(hb_wl_backward_acc(r.st, 0, 1, &err), 0);
	assert_int_equal(hb_wl_read_grads(r.st, 0, gsum, (size_t)np, &err), 0);
	for (long j = 0; j < np; j++)
		if (fabs(gsum[j] - (g0[j] + g1[j])) > 1e-5 * (1 + fabs(g0[j]) + fabs(g1[j])))
			fail_msg("%s: accumulated gradient %ld: %g != %g + %g", w->model, j, (double)gsum[j],
				 (double)g0[j], (double)g1[j]);
	/* a slice update touches the slice only */
	assert_int_equal(hb_wl_read_weights(r.st, 0, wb, (size_t)np, &err), 0);
	assert_int_equal(hb_wl_update_range(r.st, 16, 16, 0.5f, 1, &err), 0);
	assert_int_equal(hb_wl_read_weights(r.st, 0, wa, (size_t)np, &err), 0);
	for (long j = 0; j < np; j++)
		if ((j >= 16 && j < 32) != (wa[j] != wb[j]) && gsum[j] != 0)
			fail_msg("%s: weight %ld changed outside the updated slice or not inside it", w->model, j);
	assert_int_equal(hb_wl_update_range(r.st, np - 4, 8, 1.0f, 2, &err), -1);
	free(g0);
	free(g1);
	free(gsum);
	free(wb);
	free(wa);
	rig_close(&r);
}

static void test_accumulation(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];

	(void)state;
	spec_lstm(&w, ls);
	check_accumulation(&w);
	memset(&w, 0, sizeof(w));
	spec_transformer(&w, ls);
	check_accumulation(&w);
}

/* Training on a fixed batch lowers the loss (SGD and Adam). */
static void train_falls(struct hb_workload *w)
{
	struct hb_error err = { 0 };
	struct rig r;
	double first, last = 0;

	rig_open(&r, w, 4, 1, 64e6);
	assert_int_equal(hb_wl_data(r.st, 0, 0, &err), 0);
	first = loss_now(&r);
	for (int it = 0; it < 60; it++) {
		assert_int_equal(hb_wl_forward(r.st, 0, &err), 0);
		assert_int_equal(hb_wl_backward(r.st, 0, &err), 0);
		assert_int_equal(hb_wl_update(r.st, &err), 0);
	}
	last = loss_now(&r);
	if (!(last < 0.7 * first))
		fail_msg("%s: loss %g -> %g after 60 steps", w->model, first, last);
	rig_close(&r);
}

static void test_training(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];

	(void)state;
	spec_cnn(&w, ls);
	train_falls(&w);
	memset(&w, 0, sizeof(w));
	spec_transformer(&w, ls);
	train_falls(&w);
}

/* A budget too small: HB_DEV_NOMEM, and the device holds nothing after. */
static void test_nomem(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_device_config cfg = { .mem_limit_bytes = 4096 };
	struct hb_error err = { 0 };
	struct hb_device *dev;
	struct hb_stream *s[2];
	struct hb_wl_state *st = (void *)1;
	double freeb, total;

	(void)state;
	spec_transformer(&w, ls);
	assert_int_equal(ops->open(&cfg, &dev, &err), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(ops->stream_create(dev, &s[i], &err), 0);
	assert_int_equal(hb_wl_state_create(ops, dev, &w, 64, 2, s, 1, &st, &err), HB_DEV_NOMEM);
	assert_null(st);
	assert_int_equal(ops->mem_info(dev, &freeb, &total, &err), 0);
	assert_float_equal(freeb, total, 0);
	for (int i = 0; i < 2; i++)
		ops->stream_destroy(s[i]);
	ops->close(dev);
}

/* Bad specs are refused with the layer named. */
static void test_bad_spec(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_device_config cfg = { .mem_limit_bytes = 64e6 };
	struct hb_error err = { 0 };
	struct hb_device *dev;
	struct hb_stream *s;
	struct hb_wl_state *st;

	(void)state;
	spec_transformer(&w, ls);
	ls[4].residual = 1;  /* relu and residual on ffn1 */
	assert_int_equal(ops->open(&cfg, &dev, &err), 0);
	assert_int_equal(ops->stream_create(dev, &s, &err), 0);
	assert_int_equal(hb_wl_state_create(ops, dev, &w, 2, 1, &s, 1, &st, &err), -1);
	assert_non_null(strstr(err.msg, "ffn1"));
	ls[4].residual = 0;
	ls[2].heads = 3;     /* does not divide 8 */
	assert_int_equal(hb_wl_state_create(ops, dev, &w, 2, 1, &s, 1, &st, &err), -1);
	assert_non_null(strstr(err.msg, "attn"));
	ops->stream_destroy(s);
	ops->close(dev);
}

/* ------------------------------------------------------------------------ */
/* Task TEACHER                                                             */

/* A small MLP: 16 inputs, two hidden ReLU layers, 4 outputs. */
static void spec_mlp(struct hb_workload *w, struct hb_wl_layer *ls)
{
	int n = 0;

	ls[n++] = L_dense("fc1", 1, 16, 32, 1, 0);
	ls[n++] = L_dense("fc2", 1, 32, 32, 1, 0);
	ls[n++] = L_dense("fc3", 1, 32, 4, 0, 0);
	w->layers = ls;
	w->nlayers = n;
	finish_spec(w, "t-mlp", HB_WL_ADAM);
}

#define HELD_OUT 1000000L  /* a batch index no training loop reaches */

/* Loss of the student's current weights on held-out batch HELD_OUT of
 * VSW 0 (fresh samples of the same task). */
static double held_out_loss(struct rig *r)
{
	struct hb_error err = { 0 };

	assert_int_equal(hb_wl_data(r->st, 0, HELD_OUT, &err), 0);
	return loss_now(r);
}

/* Train on fresh batches 0..steps-1 (prefetched, as a live run does);
 * curve[k] = held-out loss after k * every steps (curve[0]: at init). */
static void train_teacher(struct rig *r, int steps, int every, double *curve)
{
	struct hb_error err = { 0 };

	curve[0] = held_out_loss(r);
	for (int it = 0; it < steps; it++) {
		assert_int_equal(hb_wl_prefetch(r->st, it, 1, &err), 0);
		assert_int_equal(hb_wl_data(r->st, 0, it, &err), 0);
		assert_int_equal(hb_wl_forward(r->st, 0, &err), 0);
		assert_int_equal(hb_wl_backward(r->st, 0, &err), 0);
		assert_int_equal(hb_wl_update(r->st, &err), 0);
		if ((it + 1) % every == 0)
			curve[(it + 1) / every] = held_out_loss(r);
	}
}

static void print_curve(const char *what, const double *curve, int n, int every)
{
	fprintf(stderr, "%s: held-out loss by step:", what);
	for (int k = 0; k <= n; k++)
		fprintf(stderr, " %d:%.4g", k * every, curve[k]);
	fprintf(stderr, "\n");
}

/* A student learns the teacher from fresh batches: the held-out loss falls
 * below half its initial value in 100 steps (MLP, and the transformer-like
 * spec whose inputs are embedding indices). */
static void test_teacher_learns(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_error err = { 0 };
	struct rig r;
	double curve[11];

	(void)state;
	spec_mlp(&w, ls);
	rig_open(&r, &w, 32, 1, 64e6);
	assert_int_equal(hb_wl_task(r.st), HB_WL_TASK_FIXED);
	assert_int_equal(hb_wl_set_task(r.st, HB_WL_TASK_TEACHER, 0.0, 99, &err), 0);
	assert_int_equal(hb_wl_task(r.st), HB_WL_TASK_TEACHER);
	train_teacher(&r, 100, 10, curve);
	print_curve("t-mlp, sigma 0", curve, 10, 10);
	if (!(curve[10] < 0.5 * curve[0]))
		fail_msg("t-mlp: held-out loss %g -> %g after 100 steps", curve[0], curve[10]);
	rig_close(&r);

	memset(&w, 0, sizeof(w));
	spec_transformer(&w, ls);
	rig_open(&r, &w, 32, 1, 64e6);
	assert_int_equal(hb_wl_set_task(r.st, HB_WL_TASK_TEACHER, 0.0, 99, &err), 0);
	train_teacher(&r, 100, 10, curve);
	print_curve("t-transformer, sigma 0", curve, 10, 10);
	if (!(curve[10] < 0.5 * curve[0]))
		fail_msg("t-transformer: held-out loss %g -> %g after 100 steps", curve[0], curve[10]);
	rig_close(&r);
}

/* The noise floor.  The targets' noise is N(0, sigma^2): the teacher
 * itself (clean targets of the same inputs, sigma 0) scores sigma^2 / 2
 * on them; a trained student gets near that floor but not below it. */
static void test_teacher_noise_floor(void **state)
{
	const double sigma = 0.5, floor = sigma * sigma / 2;
	const int B = 64, nout = 4;
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_error err = { 0 };
	struct rig r;
	float noisy[64 * 4], clean[64 * 4], in_a[64 * 16], in_b[64 * 16];
	double curve[31], mse = 0, mean = 0;

	(void)state;
	spec_mlp(&w, ls);
	rig_open(&r, &w, B, 1, 64e6);
	/* the noise alone, on 8 batches (2048 values) */
	for (long b = 0; b < 8; b++) {
		assert_int_equal(hb_wl_set_task(r.st, HB_WL_TASK_TEACHER, sigma, 99, &err), 0);
		assert_int_equal(hb_wl_data(r.st, 0, HELD_OUT + b, &err), 0);
		assert_int_equal(hb_wl_read_batch(r.st, 0, in_a, noisy, &err), 0);
		assert_int_equal(hb_wl_set_task(r.st, HB_WL_TASK_TEACHER, 0.0, 99, &err), 0);
		assert_int_equal(hb_wl_data(r.st, 0, HELD_OUT + b, &err), 0);
		assert_int_equal(hb_wl_read_batch(r.st, 0, in_b, clean, &err), 0);
		assert_memory_equal(in_a, in_b, sizeof(in_a));
		for (int j = 0; j < B * nout; j++) {
			mse += 0.5 * ((double)noisy[j] - clean[j]) * ((double)noisy[j] - clean[j]);
			mean += (double)noisy[j] - clean[j];
		}
	}
	mse /= 8.0 * B * nout;
	mean /= 8.0 * B * nout;
	fprintf(stderr, "sigma %g: teacher's own loss on noisy targets %.5f (floor %.5f), noise mean %.4f\n", sigma,
		mse, floor, mean);
	/* 2048 values: the mean square's relative sd is sqrt(2/2048) = 3 % */
	assert_true(fabs(mse / floor - 1) < 0.12);
	assert_true(fabs(mean) < 4 * sigma / sqrt(2048.0));

	/* a student trained on noisy fresh batches: near the floor, not below */
	assert_int_equal(hb_wl_set_task(r.st, HB_WL_TASK_TEACHER, sigma, 99, &err), 0);
	train_teacher(&r, 300, 10, curve);
	print_curve("t-mlp, sigma 0.5", curve, 30, 10);
	if (!(curve[30] > 0.85 * floor && curve[30] < 0.5 * curve[0]))
		fail_msg("sigma %g: held-out loss %g -> %g after 300 steps (floor %g)", sigma, curve[0], curve[30],
			 floor);
	rig_close(&r);
}

/* Batches are a function of (data seed, VSW, batch index): the same
 * seeds give bit-identical batches in another state, prefetched or made in
 * the data phase; other VSWs, batch indices and data seeds (ranks) differ;
 * the teacher's bytes count and go with it. */
static void test_teacher_batches(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_error err = { 0 };
	struct rig a, b;
	enum { B = 8, NIN = B * 4, NT = B * 4 * 3 };  /* 4 tokens: 1 index in, 3 outputs each */
	int32_t ia[NIN], ib[NIN];
	float ta[NT], tb[NT];
	double bytes;

	(void)state;
	spec_transformer(&w, ls);
	rig_open(&a, &w, B, 2, 64e6);
	rig_open(&b, &w, B, 2, 64e6);
	bytes = hb_wl_state_bytes(a.st);
	assert_int_equal(hb_wl_set_task(a.st, HB_WL_TASK_TEACHER, 0.1, 5, &err), 0);
	assert_int_equal(hb_wl_set_task(b.st, HB_WL_TASK_TEACHER, 0.1, 5, &err), 0);
	assert_true(hb_wl_state_bytes(a.st) > bytes);
	/* a prefetches batches 3, 4; b makes them in the data phase */
	assert_int_equal(hb_wl_prefetch(a.st, 3, 2, &err), 0);
	for (int v = 0; v < 2; v++)
		for (long it = 3; it <= 4; it++) {
			assert_int_equal(hb_wl_data(a.st, v, it, &err), 0);
			assert_int_equal(hb_wl_data(b.st, v, it, &err), 0);
			assert_int_equal(hb_wl_read_batch(a.st, v, ia, ta, &err), 0);
			assert_int_equal(hb_wl_read_batch(b.st, v, ib, tb, &err), 0);
			assert_memory_equal(ia, ib, sizeof(ia));
			assert_memory_equal(ta, tb, sizeof(ta));
		}
	/* another VSW, another batch index, another data seed: other samples */
	assert_int_equal(hb_wl_data(a.st, 0, 3, &err), 0);
	assert_int_equal(hb_wl_read_batch(a.st, 0, ia, ta, &err), 0);
	assert_int_equal(hb_wl_data(b.st, 1, 3, &err), 0);
	assert_int_equal(hb_wl_read_batch(b.st, 1, ib, tb, &err), 0);
	assert_true(memcmp(ia, ib, sizeof(ia)) != 0 && memcmp(ta, tb, sizeof(ta)) != 0);
	assert_int_equal(hb_wl_data(b.st, 0, 5, &err), 0);
	assert_int_equal(hb_wl_read_batch(b.st, 0, ib, tb, &err), 0);
	assert_true(memcmp(ia, ib, sizeof(ia)) != 0 && memcmp(ta, tb, sizeof(ta)) != 0);
	hb_wl_set_data_seed(b.st, 8);
	assert_int_equal(hb_wl_data(b.st, 0, 3, &err), 0);
	assert_int_equal(hb_wl_read_batch(b.st, 0, ib, tb, &err), 0);
	assert_true(memcmp(ia, ib, sizeof(ia)) != 0 && memcmp(ta, tb, sizeof(ta)) != 0);
	/* another teacher seed: the same inputs, other targets */
	hb_wl_set_data_seed(b.st, 7);
	assert_int_equal(hb_wl_set_task(b.st, HB_WL_TASK_TEACHER, 0.1, 6, &err), 0);
	assert_int_equal(hb_wl_data(b.st, 0, 3, &err), 0);
	assert_int_equal(hb_wl_read_batch(b.st, 0, ib, tb, &err), 0);
	assert_memory_equal(ia, ib, sizeof(ia));
	assert_true(memcmp(ta, tb, sizeof(ta)) != 0);
	/* back to FIXED: the teacher's bytes go */
	assert_int_equal(hb_wl_set_task(a.st, HB_WL_TASK_FIXED, 0, 0, &err), 0);
	assert_float_equal(hb_wl_state_bytes(a.st), bytes, 0);
	assert_int_equal(hb_wl_set_task(a.st, HB_WL_TASK_TEACHER, -1, 5, &err), -1);
	assert_non_null(strstr(err.msg, "sigma"));
	rig_close(&a);
	rig_close(&b);
}

/* A teacher that does not fit beside the student: HB_DEV_NOMEM, nothing
 * of it stays allocated, and the student trains on as before. */
static void test_teacher_nomem(void **state)
{
	struct hb_workload w = { 0 };
	struct hb_wl_layer ls[8];
	struct hb_error err = { 0 };
	struct rig r;
	double freeb, total, bytes;

	(void)state;
	spec_cnn(&w, ls);
	rig_open(&r, &w, 4, 1, 64e6);
	bytes = hb_wl_state_bytes(r.st);
	rig_close(&r);
	rig_open(&r, &w, 4, 1, bytes + 256);
	assert_int_equal(hb_wl_set_task(r.st, HB_WL_TASK_TEACHER, 0.1, 5, &err), HB_DEV_NOMEM);
	assert_int_equal(hb_wl_task(r.st), HB_WL_TASK_FIXED);
	assert_float_equal(hb_wl_state_bytes(r.st), bytes, 0);
	assert_int_equal(ops->mem_info(r.dev, &freeb, &total, &err), 0);
	assert_true(total - freeb <= bytes);
	assert_int_equal(hb_wl_data(r.st, 0, 0, &err), 0);
	(void)loss_now(&r);
	rig_close(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grad_transformer),
		cmocka_unit_test(test_grad_cnn),
		cmocka_unit_test(test_grad_lstm),
		cmocka_unit_test(test_aggregate_update_copy),
		cmocka_unit_test(test_training),
		cmocka_unit_test(test_accumulation),
		cmocka_unit_test(test_backward_hooked),
		cmocka_unit_test(test_nomem),
		cmocka_unit_test(test_bad_spec),
		cmocka_unit_test(test_teacher_learns),
		cmocka_unit_test(test_teacher_noise_floor),
		cmocka_unit_test(test_teacher_batches),
		cmocka_unit_test(test_teacher_nomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
