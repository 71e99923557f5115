/*
 * test_device_cpu.c: the cpu backend (profiler/device_cpu.c), which is also
 * the reference the cuda backend's test compares with.
 *
 * GEMM against a naive triple loop (every transpose pair, leading
 * dimensions wider than the matrix, strided batches); each linear kernel
 * against its adjoint (<F x, y> = <x, F* y>, the property backward relies
 * on); the optimizers against PyTorch's update formulas written out by
 * hand; the memory budget and HB_DEV_NOMEM; timestamps.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device.h"

static const struct hb_device_ops *ops = &hb_device_cpu;
static struct hb_device *dev;
static struct hb_stream *s;

static int setup(void **state)
{
	struct hb_device_config cfg = { .mem_limit_bytes = 1 << 20 };
	struct hb_error err = { 0 };

	(void)state;
	if (ops->open(&cfg, &dev, &err) < 0 || ops->stream_create(dev, &s, &err) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ops->stream_destroy(s);
	ops->close(dev);
	return 0;
}

static void fill_hash(float *y, long n, uint64_t seed)
{
	struct hb_error err = { 0 };

	assert_int_equal(ops->kernel(s, &(struct hb_kernel){ .op = HB_K_FILL_HASH, .y = y, .n = n, .a = 2,
							      .seed = seed }, &err), 0);
}

static double dot(const float *a, const float *b, long n)
{
	double d = 0;

	for (long i = 0; i < n; i++)
		d += (double)a[i] * b[i];
	return d;
}

static void test_gemm(void **state)
{
	enum { M = 5, N = 7, K = 3, LD = 9, BATCH = 3, STRIDE = 80 };
	float a[BATCH * STRIDE], b[BATCH * STRIDE], c[BATCH * STRIDE], ref[BATCH * STRIDE];
	struct hb_error err = { 0 };

	(void)state;
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			struct hb_gemm g = { .trans_a = ta, .trans_b = tb, .m = M, .n = N, .k = K, .alpha = 1.5f,
					     .beta = 0.5f, .a = a, .lda = LD, .stride_a = STRIDE, .b = b, .ldb = LD,
					     .stride_b = STRIDE, .c = c, .ldc = LD, .stride_c = STRIDE, .batch = BATCH };

			fill_hash(a, BATCH * STRIDE, 1);
			fill_hash(b, BATCH * STRIDE, 2);
			fill_hash(c, BATCH * STRIDE, 3);
			memcpy(ref, c, sizeof(c));
			for (int q = 0; q < BATCH; q++)
				for (int i = 0; i < M; i++)
					for (int j = 0; j < N; j++) {
						double sum = 0;

						for (int k = 0; k < K; k++) {
							float av = ta ? a[q * STRIDE + k * LD + i] : a[q * STRIDE + i * LD + k];
							float bv = tb ? b[q * STRIDE + j * LD + k] : b[q * STRIDE + k * LD + j];

							sum += (double)av * bv;
						}
						ref[q * STRIDE + i * LD + j] = (float)(1.5 * sum + 0.5 * ref[q * STRIDE + i * LD + j]);
					}
			assert_int_equal(ops->gemm(s, &g, &err), 0);
			for (int i = 0; i < BATCH * STRIDE; i++)
				assert_float_equal(c[i], ref[i], 1e-5);
		}
}

/* <F x, y> == <x, F* y> for a linear kernel pair. */
static void adjoint(struct hb_kernel fwd, struct hb_kernel bwd, long nx, long ny, const char *what)
{
	float *x = calloc((size_t)nx, sizeof(float)), *y = calloc((size_t)ny, sizeof(float));
	float *fx = calloc((size_t)ny, sizeof(float)), *fty = calloc((size_t)nx, sizeof(float));
	struct hb_error err = { 0 };
	double l, r;

	fill_hash(x, nx, 11);
	fill_hash(y, ny, 12);
	fwd.x = x;
	fwd.y = fx;
	bwd.x = y;
	bwd.y = fty;
	assert_int_equal(ops->kernel(s, &fwd, &err), 0);
	assert_int_equal(ops->kernel(s, &bwd, &err), 0);
	l = dot(fx, y, ny);
	r = dot(x, fty, nx);
	if (fabs(l - r) > 1e-4 * (1 + fabs(l)))
		fail_msg("%s: <Fx,y> %g != <x,F*y> %g", what, l, r);
	free(x);
	free(y);
	free(fx);
	free(fty);
}

static void test_adjoints(void **state)
{
	(void)state;
	/* grow 6 -> 15 and shrink 10 -> 4 per sample, 3 samples */
	adjoint((struct hb_kernel){ .op = HB_K_RESIZE_FWD, .rows = 3, .cols = 15, .ld = 6 },
		(struct hb_kernel){ .op = HB_K_RESIZE_BWD, .rows = 3, .cols = 15, .ld = 6 }, 18, 45, "resize up");
	adjoint((struct hb_kernel){ .op = HB_K_RESIZE_FWD, .rows = 3, .cols = 4, .ld = 10 },
		(struct hb_kernel){ .op = HB_K_RESIZE_BWD, .rows = 3, .cols = 4, .ld = 10 }, 30, 12, "resize down");
	/* 2 samples x 7 positions x 3 channels, 5 taps */
	adjoint((struct hb_kernel){ .op = HB_K_IM2COL, .rows = 2, .cols = 7, .ld = 3, .taps = 5 },
		(struct hb_kernel){ .op = HB_K_COL2IM, .rows = 2, .cols = 7, .ld = 3, .taps = 5 }, 42, 210, "im2col");
	/* heads: [2][5][3][4] <-> [2][3][5][4] is a permutation; its adjoint is
	 * MERGE_HEADS with heads and tokens swapped */
	adjoint((struct hb_kernel){ .op = HB_K_MERGE_HEADS, .rows = 2, .cols = 5, .ld = 3, .taps = 4 },
		(struct hb_kernel){ .op = HB_K_MERGE_HEADS, .rows = 2, .cols = 3, .ld = 5, .taps = 4 }, 120, 120,
		"merge heads");
}

/* SPLIT_HEADS then MERGE_HEADS(q, k, v) gives the packed input back. */
static void test_split_merge(void **state)
{
	enum { S = 2, T = 3, H = 2, DH = 4, N = S * T * 3 * H * DH };
	float x[N], q[N / 3], k[N / 3], v[N / 3], back[N];
	struct hb_error err = { 0 };

	(void)state;
	fill_hash(x, N, 5);
	assert_int_equal(ops->kernel(s, &(struct hb_kernel){ .op = HB_K_SPLIT_HEADS, .x = x, .y = q, .z = k, .w = v,
							      .rows = S, .cols = T, .ld = H, .taps = DH }, &err), 0);
	/* q of sample 1, head 1, position 2 is packed [1][2][0][1][:] */
	assert_memory_equal(&q[((1 * H + 1) * T + 2) * DH], &x[(((1 * T + 2) * 3 + 0) * H + 1) * DH], DH * 4);
	assert_memory_equal(&v[((0 * H + 1) * T + 1) * DH], &x[(((0 * T + 1) * 3 + 2) * H + 1) * DH], DH * 4);
	assert_int_equal(ops->kernel(s, &(struct hb_kernel){ .op = HB_K_MERGE_HEADS, .y = back, .x = q, .z = k,
							      .w = v, .rows = S, .cols = T, .ld = H, .taps = DH },
				     &err), 0);
	assert_memory_equal(back, x, sizeof(x));
}

static void test_softmax(void **state)
{
	enum { R = 4, C = 6 };
	float x[R * C], y[R * C], dy[R * C], dx[R * C];
	struct hb_error err = { 0 };

	(void)state;
	fill_hash(x, R * C, 9);
	fill_hash(dy, R * C, 10);
	x[0] = 80;  /* large logits stay finite */
	assert_int_equal(ops->kernel(s, &(struct hb_kernel){ .op = HB_K_SOFTMAX_FWD, .y = y, .x = x, .rows = R,
							      .cols = C, .a = 0.5f }, &err), 0);
	for (int r = 0; r < R; r++) {
		double sum = 0;

		for (int c = 0; c < C; c++)
			sum += y[r * C + c];
		assert_float_equal(sum, 1.0, 1e-5);
	}
	assert_int_equal(ops->kernel(s, &(struct hb_kernel){ .op = HB_K_SOFTMAX_BWD, .z = dx, .x = dy, .y = y,
							      .rows = R, .cols = C, .a = 0.5f }, &err), 0);
	/* finite difference on row 1: d/dx_j sum_i dy_i softmax(0.5 x)_i */
	for (int j = 0; j < C; j++) {
		float xp[C], yp[C];
		double lp = 0, lm = 0;

		for (int sgn = 0; sgn < 2; sgn++) {
			memcpy(xp, &x[C], sizeof(xp));
			xp[j] += sgn ? -1e-2f : 1e-2f;
			assert_int_equal(ops->kernel(s, &(struct hb_kernel){ .op = HB_K_SOFTMAX_FWD, .y = yp, .x = xp,
									      .rows = 1, .cols = C, .a = 0.5f },
						     &err), 0);
			if (sgn)
				lm = dot(yp, &dy[C], C);
			else
				lp = dot(yp, &dy[C], C);
		}
		assert_float_equal(dx[C + j], (lp - lm) / 2e-2, 2e-3);
	}
}

/* One SGD-momentum and two AdamW steps against the formulas. */
static void test_optimizers(void **state)
{
	float w[3] = { 1, -2, 0.5f }, g[3] = { 0.1f, -0.3f, 2 }, m[3] = { 0 }, v[3] = { 0 };
	struct hb_error err = { 0 };
	double ew[3], em[3], ev[3];

	(void)state;
	for (int i = 0; i < 3; i++) {
		double gg = g[i] + 1e-4 * w[i];

		em[i] = gg;
		ew[i] = w[i] - 0.1 * em[i];
	}
	assert_int_equal(ops->kernel(s, &(struct hb_kernel){ .op = HB_K_SGD_MOMENTUM, .y = w, .x = g, .z = m, .n = 3,
							      .a = 0.1f, .b = 0.9f, .c = 1e-4f }, &err), 0);
	for (int i = 0; i < 3; i++) {
		assert_float_equal(w[i], ew[i], 1e-6);
		assert_float_equal(m[i], em[i], 1e-6);
	}
	memset(m, 0, sizeof(m));
	for (int i = 0; i < 3; i++)
		ew[i] = w[i], em[i] = 0, ev[i] = 0;
	for (int t = 1; t <= 2; t++) {
		for (int i = 0; i < 3; i++) {
			ew[i] *= 1 - 1e-3 * 0.01;
			em[i] = 0.9 * em[i] + 0.1 * g[i];
			ev[i] = 0.999 * ev[i] + 0.001 * (double)g[i] * g[i];
			ew[i] -= 1e-3 * (em[i] / (1 - pow(0.9, t))) / (sqrt(ev[i] / (1 - pow(0.999, t))) + 1e-8);
		}
		assert_int_equal(ops->kernel(s, &(struct hb_kernel){ .op = HB_K_ADAM, .y = w, .x = g, .z = m, .w = v,
								      .n = 3, .a = 1e-3f, .b = 0.9f, .c = 0.999f,
								      .d = 1e-8f, .e = 0.01f, .step = t }, &err), 0);
	}
	for (int i = 0; i < 3; i++)
		assert_float_equal(w[i], ew[i], 1e-6);
}

static void test_memory_budget(void **state)
{
	struct hb_error err = { 0 };
	void *a, *b;
	double freeb, total;

	(void)state;
	assert_int_equal(ops->mem_alloc(dev, 600 << 10, &a, &err), 0);
	assert_int_equal(ops->mem_alloc(dev, 600 << 10, &b, &err), HB_DEV_NOMEM);
	assert_null(b);
	assert_int_equal(ops->mem_info(dev, &freeb, &total, &err), 0);
	assert_float_equal(total, 1048576.0, 0);
	assert_float_equal(freeb, 1048576.0 - 614400.0, 0);
	ops->mem_free(dev, a);
	assert_int_equal(ops->mem_alloc(dev, 600 << 10, &b, &err), 0);
	ops->mem_free(dev, b);
	assert_int_equal(ops->mem_info(dev, &freeb, &total, &err), 0);
	assert_float_equal(freeb, total, 0);
}

static void test_events_and_registry(void **state)
{
	struct hb_error err = { 0 };
	struct hb_event *e0, *e1;
	double t;
	const char *why = "x";

	(void)state;
	assert_int_equal(ops->event_create(dev, &e0, &err), 0);
	assert_int_equal(ops->event_create(dev, &e1, &err), 0);
	assert_int_equal(ops->event_elapsed(e0, e1, &t, &err), -1);  /* never recorded */
	assert_int_equal(ops->event_record(s, e0, &err), 0);
	assert_int_equal(ops->event_record(s, e1, &err), 0);
	assert_int_equal(ops->event_elapsed(e0, e1, &t, &err), 0);
	assert_true(t >= 0 && t < 1);
	ops->event_destroy(e0);
	ops->event_destroy(e1);
	assert_ptr_equal(hb_device_backend("cpu"), &hb_device_cpu);
	assert_null(hb_device_backend("tpu"));
	assert_true(ops->available(&why));
	assert_non_null(strstr(hb_device_backend_names(), "cpu"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gemm),
		cmocka_unit_test(test_adjoints),
		cmocka_unit_test(test_split_merge),
		cmocka_unit_test(test_softmax),
		cmocka_unit_test(test_optimizers),
		cmocka_unit_test(test_memory_budget),
		cmocka_unit_test(test_events_and_registry),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
