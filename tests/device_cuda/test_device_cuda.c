/*
 * Tests for the cuda device backend (profiler/device_cuda.c, kernels.cu).
 *
 * Two programs in one, chosen by the first argument:
 *
 *   (none)     needs a GPU: every kernel op and the GEMM (plain, transposed
 *              either way or both, strided-batched) run on the cuda and the
 *              cpu backend on the same inputs, made on each by FILL_HASH
 *              (which must agree bit for bit), and the results are compared;
 *              then out-of-memory, the memory cap, events, copies and
 *              streams used from several threads.  Exits 77 (skipped) when
 *              built without the toolkit or when no CUDA device is present.
 *   --no-gpu   for machines without a GPU: the backend says it is not
 *              available, with the reason "no CUDA device", and opening it
 *              fails cleanly.  Exits 77 when a GPU is present.  Built
 *              without the toolkit, it checks that the registry has no
 *              cuda backend.
 *
 * Tolerances.  Elementwise ops: 1e-5 relative, measured against at least a
 * tenth of the array's largest magnitude, so that a value that cancels to
 * near zero (dc + dh o (1 - tanh^2 c), a sum of scattered rows) is judged at
 * the scale of the terms that made it.  kernels.cu is built without FMA
 * contraction, so most ops agree exactly; the slack is for expf/tanhf (a
 * few ulp on the GPU) and for the order of atomic additions.  GEMM and
 * softmax (different summation orders): 1e-4 relative in the 2-norm over
 * the whole output; what a GEMM must not write (row padding, gaps between
 * batch members) must be bit-identical.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "device.h"     /* defines: struct hb_device_ops, hb_device_cpu, hb_device_cuda, hb_hash_unit */
#include "hb_config.h"  /* defines: HB_HAVE_GPU */
#if HB_HAVE_GPU
#include "cublas_lazy.h" /* defines: hb_cublas */
#endif

#if HB_HAVE_GPU

#define CPU 0           /* index of the reference backend in the pairs below */
#define GPU 1

#define RTOL_ELEM 1e-5
#define RTOL_NORM 1e-4
#define MiB (1024.0 * 1024.0)

/* The two backends, opened once for the GPU group. */
static const struct hb_device_ops *ops[2] = { &hb_device_cpu, &hb_device_cuda };
static struct hb_device *dev[2];
static struct hb_stream *stream[2];

/* One array allocated on both backends. */
struct buf {
	void *p[2];
	size_t bytes;
};

/* The buffers a kernel reads and writes, as struct hb_kernel names them. */
struct kargs {
	struct buf *y, *z, *w, *v, *x, *idx;
};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */

static void sync_both(void)
{
	struct hb_error err = { 0 };

	for (int b = 0; b < 2; b++)
		if (ops[b]->stream_sync(stream[b], &err) != 0)
			fail_msg("%s: stream_sync: %s", ops[b]->name, err.msg);
}

static void buf_new(struct buf *bf, size_t bytes)
{
	struct hb_error err = { 0 };

	bf->bytes = bytes;
	for (int b = 0; b < 2; b++)
		if (ops[b]->mem_alloc(dev[b], bytes, &bf->p[b], &err) != 0)
			fail_msg("%s: mem_alloc %zu bytes: %s", ops[b]->name, bytes, err.msg);
}

static void buf_floats(struct buf *bf, long n)
{
	buf_new(bf, (size_t)n * sizeof(float));
}

static void buf_free(struct buf *bf)
{
	for (int b = 0; b < 2; b++)
		ops[b]->mem_free(dev[b], bf->p[b]);
	memset(bf, 0, sizeof(*bf));
}

static long buf_n(const struct buf *bf)
{
	return (long)(bf->bytes / sizeof(float));
}

/* Run k on both backends, with each backend's pointers for a's buffers. */
static void run_both(struct hb_kernel k, const struct kargs *a)
{
	struct hb_error err = { 0 };

	for (int b = 0; b < 2; b++) {
		struct hb_kernel kb = k;

		kb.y = a->y ? a->y->p[b] : NULL;
		kb.z = a->z ? a->z->p[b] : NULL;
		kb.w = a->w ? a->w->p[b] : NULL;
		kb.v = a->v ? a->v->p[b] : NULL;
		kb.x = a->x ? a->x->p[b] : NULL;
		kb.idx = a->idx ? a->idx->p[b] : NULL;
		if (ops[b]->kernel(stream[b], &kb, &err) != 0)
			fail_msg("%s: kernel %d: %s", ops[b]->name, (int)k.op, err.msg);
	}
	sync_both();
}

/* FILL_HASH the whole buffer on both backends. */
static void buf_hash(struct buf *bf, uint64_t seed, float a)
{
	struct hb_kernel k = { .op = HB_K_FILL_HASH, .n = buf_n(bf), .a = a, .seed = seed };

	run_both(k, &(struct kargs){ .y = bf });
}

/* The same host bytes into both backends' copies. */
static void buf_put(struct buf *bf, const void *host)
{
	struct hb_error err = { 0 };

	for (int b = 0; b < 2; b++)
		if (ops[b]->memcpy_h2d(stream[b], bf->p[b], host, bf->bytes, &err) != 0)
			fail_msg("%s: memcpy_h2d: %s", ops[b]->name, err.msg);
	sync_both();
}

/* Backend b's copy on the host (caller frees). */
static float *buf_get(const struct buf *bf, int b)
{
	struct hb_error err = { 0 };
	float *h = malloc(bf->bytes ? bf->bytes : 1);

	assert_non_null(h);
	if (ops[b]->memcpy_d2h(stream[b], h, bf->p[b], bf->bytes, &err) != 0 ||
	    ops[b]->stream_sync(stream[b], &err) != 0)
		fail_msg("%s: memcpy_d2h: %s", ops[b]->name, err.msg);
	return h;
}

static void expect_identical(const struct buf *bf, const char *what)
{
	float *c = buf_get(bf, CPU), *g = buf_get(bf, GPU);

	for (long i = 0; i < buf_n(bf); i++)
		if (memcmp(&c[i], &g[i], sizeof(float)) != 0) {
			print_error("%s: element %ld: cpu %.9g cuda %.9g (bits differ)\n", what, i, c[i], g[i]);
			free(c);
			free(g);
			fail();
		}
	free(c);
	free(g);
}

/* Elementwise: |g - c| <= RTOL_ELEM * max(|c|, max|c| / 10). */
static void expect_close(const struct buf *bf, const char *what)
{
	float *c = buf_get(bf, CPU), *g = buf_get(bf, GPU);
	double big = 0;

	for (long i = 0; i < buf_n(bf); i++)
		if (fabs(c[i]) > big)
			big = fabs(c[i]);
	for (long i = 0; i < buf_n(bf); i++) {
		double scale = fabs(c[i]) > big / 10 ? fabs(c[i]) : big / 10;

		if (!isfinite(c[i]) || !isfinite(g[i]) || fabs((double)g[i] - c[i]) > RTOL_ELEM * scale) {
			print_error("%s: element %ld of %ld: cpu %.9g cuda %.9g\n", what, i, buf_n(bf), c[i], g[i]);
			free(c);
			free(g);
			fail();
		}
	}
	free(c);
	free(g);
}

/* 2-norm: ||g - c|| <= RTOL_NORM * ||c||. */
static void expect_norm_close(const struct buf *bf, const char *what)
{
	float *c = buf_get(bf, CPU), *g = buf_get(bf, GPU);
	double diff = 0, ref = 0;

	for (long i = 0; i < buf_n(bf); i++) {
		if (!isfinite(c[i]) || !isfinite(g[i])) {
			print_error("%s: element %ld: cpu %.9g cuda %.9g\n", what, i, c[i], g[i]);
			fail();
		}
		diff += ((double)g[i] - c[i]) * ((double)g[i] - c[i]);
		ref += (double)c[i] * c[i];
	}
	free(c);
	free(g);
	if (!(sqrt(diff) <= RTOL_NORM * sqrt(ref)))
		fail_msg("%s: |cuda - cpu| = %g, |cpu| = %g", what, sqrt(diff), sqrt(ref));
}

/* ------------------------------------------------------------------------ */
/* Fixture                                                                  */

static int setup(void **state)
{
	struct hb_device_config cpu_cfg = { .index = 0, .mem_limit_bytes = 4096 * MiB };
	struct hb_device_config gpu_cfg = { .index = 0, .mem_limit_bytes = 0 };
	struct hb_error err = { 0 };

	(void)state;
	if (ops[CPU]->open(&cpu_cfg, &dev[CPU], &err) != 0 || ops[GPU]->open(&gpu_cfg, &dev[GPU], &err) != 0 ||
	    ops[CPU]->stream_create(dev[CPU], &stream[CPU], &err) != 0 ||
	    ops[GPU]->stream_create(dev[GPU], &stream[GPU], &err) != 0) {
		fprintf(stderr, "setup: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int b = 0; b < 2; b++) {
		ops[b]->stream_destroy(stream[b]);
		ops[b]->close(dev[b]);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Device                                                                   */

static void test_info(void **state)
{
	struct hb_device_info info;
	struct hb_error err = { 0 };
	double fr = 0, tot = 0;

	(void)state;
	assert_int_equal(ops[GPU]->info(dev[GPU], &info, &err), 0);
	printf("%s: %s, sm %d.%d, %.1f GiB, driver %s, runtime %s, %s, %d device(s), %d host cores\n",
	       info.backend, info.name, info.sm_major, info.sm_minor, info.total_bytes / (1024 * MiB), info.driver,
	       info.runtime, info.blas, info.ndevices, info.host_cores);
	assert_string_equal(info.backend, "cuda");
	assert_true(info.name[0] != '\0');
	assert_true(info.driver[0] != '\0');
	assert_true(info.runtime[0] != '\0');
	assert_true(strncmp(info.blas, "cuBLAS", 6) == 0);
	assert_int_equal(info.index, 0);
	assert_true(info.sm_major >= 7);
	assert_true(info.total_bytes > 0);
	assert_true(info.host_cores >= 1);
	assert_true(info.ndevices >= 1);

	/* cudaMemGetInfo's total and cudaDeviceProp's: the same memory */
	assert_int_equal(ops[GPU]->mem_info(dev[GPU], &fr, &tot, &err), 0);
	assert_true(fabs(tot - info.total_bytes) <= 0.01 * info.total_bytes);
	assert_true(fr > 0 && fr <= tot);
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */

static void test_fill(void **state)
{
	struct buf y;

	(void)state;
	/* more than MAX_GRID * BLOCK of kernels.cu, so the grid-stride loop wraps */
	buf_floats(&y, 9000001);
	buf_hash(&y, 0x5eedull, 2.0f);
	expect_identical(&y, "FILL_HASH");
	run_both((struct hb_kernel){ .op = HB_K_FILL, .n = 1000, .a = 3.25f }, &(struct kargs){ .y = &y });
	expect_identical(&y, "FILL");
	/* n = 0 launches nothing and is not an error */
	run_both((struct hb_kernel){ .op = HB_K_FILL, .n = 0, .a = 1 }, &(struct kargs){ .y = &y });
	buf_free(&y);
}

static void test_elementwise(void **state)
{
	const long n = 100003;
	struct buf y, x, z, w;

	(void)state;
	buf_floats(&y, n);
	buf_floats(&x, n);
	buf_floats(&z, n);
	buf_floats(&w, n);
	buf_hash(&y, 1, 2.0f);
	buf_hash(&x, 2, 3.0f);

	run_both((struct hb_kernel){ .op = HB_K_AXPY, .n = n, .a = 0.7f }, &(struct kargs){ .y = &y, .x = &x });
	expect_close(&y, "AXPY");
	run_both((struct hb_kernel){ .op = HB_K_SCALE, .n = n, .a = -1.3f }, &(struct kargs){ .y = &y });
	expect_close(&y, "SCALE");

	run_both((struct hb_kernel){ .op = HB_K_RELU_FWD, .n = n }, &(struct kargs){ .y = &z, .x = &x });
	expect_close(&z, "RELU_FWD");
	run_both((struct hb_kernel){ .op = HB_K_RELU_FWD, .n = n }, &(struct kargs){ .y = &y, .x = &y });
	expect_close(&y, "RELU_FWD in place");
	buf_hash(&z, 3, 1.0f);  /* y = y_fwd, x = dy, z = dx */
	run_both((struct hb_kernel){ .op = HB_K_RELU_BWD, .n = n }, &(struct kargs){ .z = &w, .x = &z, .y = &x });
	expect_close(&w, "RELU_BWD");

	buf_hash(&y, 4, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_MSE_GRAD, .n = n, .a = 0.25f },
		 &(struct kargs){ .z = &z, .y = &y, .x = &x });
	expect_close(&z, "MSE_GRAD");

	/* SGD: y = w, x = g, z = m */
	buf_hash(&y, 5, 1.0f);
	buf_hash(&z, 6, 0.1f);
	for (int step = 0; step < 3; step++)
		run_both((struct hb_kernel){ .op = HB_K_SGD_MOMENTUM, .n = n, .a = 0.1f, .b = 0.9f, .c = 1e-4f },
			 &(struct kargs){ .y = &y, .x = &x, .z = &z });
	expect_close(&y, "SGD_MOMENTUM w");
	expect_close(&z, "SGD_MOMENTUM m");

	/* AdamW: y = w, x = g, z = m, w = v (v >= 0: a hash through RELU);
	 * lr and wd large enough that the decay (lr wd = 1e-3) and the step
	 * are well above the tolerance */
	buf_hash(&y, 7, 1.0f);
	buf_hash(&z, 8, 0.1f);
	buf_hash(&w, 9, 0.02f);
	run_both((struct hb_kernel){ .op = HB_K_RELU_FWD, .n = n }, &(struct kargs){ .y = &w, .x = &w });
	for (long step = 1; step <= 3; step++)
		run_both((struct hb_kernel){ .op = HB_K_ADAM, .n = n, .a = 1e-2f, .b = 0.9f, .c = 0.999f, .d = 1e-8f,
					     .e = 0.1f, .step = step },
			 &(struct kargs){ .y = &y, .x = &x, .z = &z, .w = &w });
	expect_close(&y, "ADAM w");
	expect_close(&z, "ADAM m");
	expect_close(&w, "ADAM v");

	buf_free(&y);
	buf_free(&x);
	buf_free(&z);
	buf_free(&w);
}

static void check_resize(long rows, long cols_out, long cols_in)
{
	struct buf in, out;

	buf_floats(&in, rows * cols_in);
	buf_floats(&out, rows * cols_out);
	buf_hash(&in, 10, 2.0f);
	buf_hash(&out, 11, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_RESIZE_FWD, .rows = rows, .cols = cols_out, .ld = cols_in },
		 &(struct kargs){ .y = &out, .x = &in });
	expect_close(&out, "RESIZE_FWD");
	buf_hash(&out, 12, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_RESIZE_BWD, .rows = rows, .cols = cols_out, .ld = cols_in },
		 &(struct kargs){ .y = &in, .x = &out });
	expect_close(&in, "RESIZE_BWD");
	buf_free(&in);
	buf_free(&out);
}

static void test_resize(void **state)
{
	(void)state;
	check_resize(5, 23, 7);  /* repeats the input 3 1/3 times */
	check_resize(3, 4, 7);   /* truncates */
}

static void check_im2col(long rows, long t, long c, long taps)
{
	struct buf x, cols;

	buf_floats(&x, rows * t * c);
	buf_floats(&cols, rows * t * taps * c);
	buf_hash(&x, 13, 2.0f);
	buf_hash(&cols, 14, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_IM2COL, .rows = rows, .cols = t, .ld = c, .taps = taps },
		 &(struct kargs){ .y = &cols, .x = &x });
	expect_close(&cols, "IM2COL");
	buf_hash(&cols, 15, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_COL2IM, .rows = rows, .cols = t, .ld = c, .taps = taps },
		 &(struct kargs){ .y = &x, .x = &cols });
	expect_close(&x, "COL2IM");
	buf_free(&x);
	buf_free(&cols);
}

static void test_im2col(void **state)
{
	(void)state;
	check_im2col(3, 11, 5, 3);
	check_im2col(2, 9, 4, 4);  /* even taps: offsets -2 .. 1 */
	check_im2col(2, 2, 3, 5);  /* more taps than positions: offsets wrap more than once */
}

static void check_softmax(long rows, long cols, float a)
{
	struct buf x, y, dy, dx;

	buf_floats(&x, rows * cols);
	buf_floats(&y, rows * cols);
	buf_floats(&dy, rows * cols);
	buf_floats(&dx, rows * cols);
	buf_hash(&x, 16, 20.0f);
	run_both((struct hb_kernel){ .op = HB_K_SOFTMAX_FWD, .rows = rows, .cols = cols, .a = a },
		 &(struct kargs){ .y = &y, .x = &x });
	expect_norm_close(&y, "SOFTMAX_FWD");
	/* the backward pass on one y_fwd for both: the cpu's */
	{
		float *yf = buf_get(&y, CPU);

		buf_put(&y, yf);
		free(yf);
	}
	buf_hash(&dy, 17, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_SOFTMAX_BWD, .rows = rows, .cols = cols, .a = a },
		 &(struct kargs){ .z = &dx, .x = &dy, .y = &y });
	expect_norm_close(&dx, "SOFTMAX_BWD");
	buf_free(&x);
	buf_free(&y);
	buf_free(&dy);
	buf_free(&dx);
}

static void test_softmax(void **state)
{
	(void)state;
	check_softmax(7, 1000, 0.5f);  /* rows wider than a block */
	check_softmax(5, 3, 1.0f);     /* narrower than a warp */
	check_softmax(300, 64, 0.125f);
}

static void test_heads(void **state)
{
	const long S = 2, t = 5, h = 3, dh = 4, n = S * t * h * dh;
	struct buf packed, q, k, v, merged;

	(void)state;
	buf_floats(&packed, 3 * n);
	buf_floats(&q, n);
	buf_floats(&k, n);
	buf_floats(&v, n);
	buf_floats(&merged, n);
	buf_hash(&packed, 18, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_SPLIT_HEADS, .rows = S, .cols = t, .ld = h, .taps = dh },
		 &(struct kargs){ .x = &packed, .y = &q, .z = &k, .w = &v });
	expect_close(&q, "SPLIT_HEADS q");
	expect_close(&k, "SPLIT_HEADS k");
	expect_close(&v, "SPLIT_HEADS v");

	run_both((struct hb_kernel){ .op = HB_K_MERGE_HEADS, .rows = S, .cols = t, .ld = h, .taps = dh },
		 &(struct kargs){ .y = &merged, .x = &q });
	expect_close(&merged, "MERGE_HEADS");

	buf_hash(&q, 19, 2.0f);
	buf_hash(&k, 20, 2.0f);
	buf_hash(&v, 21, 2.0f);
	buf_hash(&packed, 22, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_MERGE_HEADS, .rows = S, .cols = t, .ld = h, .taps = dh },
		 &(struct kargs){ .y = &packed, .x = &q, .z = &k, .w = &v });
	expect_close(&packed, "MERGE_HEADS (adjoint of SPLIT_HEADS)");

	buf_free(&packed);
	buf_free(&q);
	buf_free(&k);
	buf_free(&v);
	buf_free(&merged);
}

static void check_lstm(int with_c_prev)
{
	const long rows = 4, H = 33, ld = 40;
	struct buf gates, c_prev, c, h, dc, dh;
	struct buf *cp = with_c_prev ? &c_prev : NULL;

	buf_floats(&gates, rows * 4 * H);
	buf_floats(&c_prev, rows * H);
	buf_floats(&c, rows * H);
	buf_floats(&h, rows * ld);
	buf_floats(&dc, rows * H);
	buf_floats(&dh, rows * ld);

	buf_hash(&gates, 23, 4.0f);
	buf_hash(&c_prev, 24, 2.0f);
	buf_hash(&c, 25, 2.0f);
	buf_hash(&h, 26, 2.0f);  /* columns H .. ld-1 must keep these */
	run_both((struct hb_kernel){ .op = HB_K_LSTM_CELL_FWD, .rows = rows, .cols = H, .ld = ld },
		 &(struct kargs){ .y = &gates, .x = cp, .z = &c, .w = &h });
	expect_close(&gates, "LSTM_CELL_FWD gates");
	expect_close(&c, "LSTM_CELL_FWD c");
	expect_close(&h, "LSTM_CELL_FWD h");

	/* backward from the same inputs on both: post-activation gates in
	 * (-0.5, 0.5) are not what a sigmoid gives, but the formulas are what
	 * is compared */
	buf_hash(&gates, 27, 1.0f);
	buf_hash(&c, 28, 2.0f);
	buf_hash(&dc, 29, 2.0f);
	buf_hash(&dh, 30, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_LSTM_CELL_BWD, .rows = rows, .cols = H, .ld = ld },
		 &(struct kargs){ .y = &gates, .x = cp, .v = &c, .z = &dc, .w = &dh });
	expect_close(&gates, "LSTM_CELL_BWD d gates");
	expect_close(&dc, "LSTM_CELL_BWD d c_prev");

	buf_free(&gates);
	buf_free(&c_prev);
	buf_free(&c);
	buf_free(&h);
	buf_free(&dc);
	buf_free(&dh);
}

static void test_lstm(void **state)
{
	(void)state;
	check_lstm(1);
	check_lstm(0);  /* c_prev NULL: the first step */
}

static void test_embedding(void **state)
{
	const int32_t idx[12] = { 3, 0, 9, 3, 5, 5, 1, 8, 2, 7, 3, 0 };  /* repeats: SCATTER_ADD_ROWS adds them */
	const long rows = 12, cols = 17, vocab = 10;
	struct buf table, y, ib;

	(void)state;
	buf_floats(&table, vocab * cols);
	buf_floats(&y, rows * cols);
	buf_new(&ib, sizeof(idx));
	buf_put(&ib, idx);
	buf_hash(&table, 31, 2.0f);
	buf_hash(&y, 32, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_GATHER_ROWS, .rows = rows, .cols = cols },
		 &(struct kargs){ .y = &y, .x = &table, .idx = &ib });
	expect_close(&y, "GATHER_ROWS");

	buf_hash(&y, 33, 2.0f);
	run_both((struct hb_kernel){ .op = HB_K_SCATTER_ADD_ROWS, .rows = rows, .cols = cols },
		 &(struct kargs){ .y = &table, .x = &y, .idx = &ib });
	expect_close(&table, "SCATTER_ADD_ROWS");
	buf_free(&table);
	buf_free(&y);
	buf_free(&ib);
}

static void test_unknown_kernel(void **state)
{
	struct hb_kernel k = { .op = HB_K_NOP_COUNT };
	struct hb_error err = { 0 };

	(void)state;
	assert_int_equal(ops[GPU]->kernel(stream[GPU], &k, &err), -1);
	assert_non_null(strstr(err.msg, "kernel"));
}

/* ------------------------------------------------------------------------ */
/* GEMM                                                                     */

/* C = 1.25 op(A) op(B) + 0.5 C with padded rows and gapped batch members,
 * so a mixed-up leading dimension or stride shows. */
static void check_gemm(int ta, int tb, long m, long n, long k, long batch)
{
	long lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 5, ldc = n + 2;
	long sa = (ta ? k : m) * lda + 7, sb = (tb ? n : k) * ldb + 11, sc = m * ldc + 13;
	struct hb_error err = { 0 };
	struct buf A, B, C;
	float *c, *g;
	double diff = 0, ref = 0;
	char what[96];

	snprintf(what, sizeof(what), "gemm%s%s m %ld n %ld k %ld batch %ld", ta ? " A^T" : "", tb ? " B^T" : "", m, n, k,
		 batch);
	buf_floats(&A, batch * sa);
	buf_floats(&B, batch * sb);
	buf_floats(&C, batch * sc);
	buf_hash(&A, 40, 2.0f);
	buf_hash(&B, 41, 2.0f);
	buf_hash(&C, 42, 2.0f);
	for (int b = 0; b < 2; b++) {
		struct hb_gemm gm = { .trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .alpha = 1.25f, .beta = 0.5f,
				      .a = A.p[b], .lda = lda, .stride_a = sa,
				      .b = B.p[b], .ldb = ldb, .stride_b = sb,
				      .c = C.p[b], .ldc = ldc, .stride_c = sc, .batch = batch };

		if (ops[b]->gemm(stream[b], &gm, &err) != 0)
			fail_msg("%s: %s: %s", ops[b]->name, what, err.msg);
	}
	sync_both();

	c = buf_get(&C, CPU);
	g = buf_get(&C, GPU);
	for (long e = 0; e < batch * sc; e++) {
		long off = e % sc;
		int inside = off < m * ldc && off % ldc < n;

		if (!inside && memcmp(&c[e], &g[e], sizeof(float)) != 0)
			fail_msg("%s: cuda wrote element %ld outside C (member %ld, offset %ld)", what, e, e / sc, off);
		diff += ((double)g[e] - c[e]) * ((double)g[e] - c[e]);
		ref += (double)c[e] * c[e];
	}
	free(c);
	free(g);
	if (!(sqrt(diff) <= RTOL_NORM * sqrt(ref)))
		fail_msg("%s: |cuda - cpu| = %g, |cpu| = %g", what, sqrt(diff), sqrt(ref));
	buf_free(&A);
	buf_free(&B);
	buf_free(&C);
}

static void test_gemm(void **state)
{
	(void)state;
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			check_gemm(ta, tb, 37, 53, 29, 1);
			check_gemm(ta, tb, 19, 7, 41, 3);  /* strided-batched */
		}
	check_gemm(0, 0, 256, 192, 320, 1);
	check_gemm(1, 0, 64, 96, 128, 4);
}

/* A leading dimension smaller than a row: cuBLAS refuses it, the backend
 * reports it. */
static void test_gemm_error(void **state)
{
	struct hb_error err = { 0 };
	struct buf A;
	struct hb_gemm gm = { .m = 4, .n = 4, .k = 4, .alpha = 1, .lda = 2, .ldb = 4, .ldc = 4, .batch = 1 };

	(void)state;
	buf_floats(&A, 64);
	gm.a = A.p[GPU];
	gm.b = A.p[GPU];
	gm.c = (float *)A.p[GPU] + 32;
	assert_int_equal(ops[GPU]->gemm(stream[GPU], &gm, &err), -1);
	assert_non_null(strstr(err.msg, "gemm"));
	buf_free(&A);
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

/* Fill a fresh allocation on the GPU and read it back: the device and the
 * thread's error state are fine. */
static void expect_usable(struct hb_device *d, struct hb_stream *s, size_t bytes)
{
	struct hb_error err = { 0 };
	void *p = NULL;
	float *h = malloc(bytes);
	long n = (long)(bytes / sizeof(float));

	assert_non_null(h);
	assert_int_equal(ops[GPU]->mem_alloc(d, bytes, &p, &err), 0);
	assert_non_null(p);
	if (ops[GPU]->kernel(s, &(struct hb_kernel){ .op = HB_K_FILL, .y = p, .n = n, .a = 1.5f }, &err) != 0 ||
	    ops[GPU]->memcpy_d2h(s, h, p, bytes, &err) != 0 || ops[GPU]->stream_sync(s, &err) != 0)
		fail_msg("after out-of-memory: %s", err.msg);
	assert_true(h[0] == 1.5f && h[n - 1] == 1.5f);
	ops[GPU]->mem_free(d, p);
	free(h);
}

static void test_nomem(void **state)
{
	struct hb_error err = { 0 };
	double fr = 0, tot = 0;
	void *p = (void *)1;

	(void)state;
	/* 1 PiB: refused by the count before cudaMalloc sees it */
	assert_int_equal(ops[GPU]->mem_alloc(dev[GPU], (size_t)1 << 50, &p, &err), HB_DEV_NOMEM);
	assert_null(p);
	expect_usable(dev[GPU], stream[GPU], 1 << 20);

	/* the whole device: within the count (nothing else allocated through
	 * this handle), but the context and cuBLAS already hold some, so
	 * cudaMalloc itself fails */
	assert_int_equal(ops[GPU]->mem_info(dev[GPU], &fr, &tot, &err), 0);
	p = (void *)1;
	assert_int_equal(ops[GPU]->mem_alloc(dev[GPU], (size_t)tot, &p, &err), HB_DEV_NOMEM);
	assert_null(p);
	expect_usable(dev[GPU], stream[GPU], 1 << 20);
}

static void test_mem_limit(void **state)
{
	struct hb_device_config cfg = { .index = 0, .mem_limit_bytes = 64 * MiB };
	struct hb_device_info info;
	struct hb_error err = { 0 };
	struct hb_device *d = NULL;
	struct hb_stream *s = NULL;
	void *p1 = NULL, *p2 = NULL;
	double fr = 0, tot = 0;

	(void)state;
	assert_int_equal(ops[GPU]->open(&cfg, &d, &err), 0);
	assert_int_equal(ops[GPU]->stream_create(d, &s, &err), 0);
	assert_int_equal(ops[GPU]->info(d, &info, &err), 0);
	assert_true(info.total_bytes == 64 * MiB);

	assert_int_equal(ops[GPU]->mem_alloc(d, (size_t)(40 * MiB), &p1, &err), 0);
	assert_int_equal(ops[GPU]->mem_info(d, &fr, &tot, &err), 0);
	assert_true(tot == 64 * MiB);
	assert_true(fr <= 24 * MiB && fr > 0);
	assert_int_equal(ops[GPU]->mem_alloc(d, (size_t)(40 * MiB), &p2, &err), HB_DEV_NOMEM);
	assert_null(p2);
	ops[GPU]->mem_free(d, p1);
	assert_int_equal(ops[GPU]->mem_info(d, &fr, &tot, &err), 0);
	assert_true(fr == 64 * MiB);
	assert_int_equal(ops[GPU]->mem_alloc(d, (size_t)(40 * MiB), &p2, &err), 0);
	ops[GPU]->mem_free(d, p2);
	expect_usable(d, s, 1 << 20);

	ops[GPU]->stream_destroy(s);
	ops[GPU]->close(d);

	/* a negative cap is the caller's mistake */
	cfg.mem_limit_bytes = -1;
	assert_int_equal(ops[GPU]->open(&cfg, &d, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_null(d);
}

/* ------------------------------------------------------------------------ */
/* Events, copies, threads                                                  */

static void test_events(void **state)
{
	const long n = 2048;
	struct hb_error err = { 0 };
	struct hb_event *e0 = NULL, *e1 = NULL, *e2 = NULL;
	void *a = NULL, *c = NULL;
	double sec = -1;

	(void)state;
	assert_int_equal(ops[GPU]->mem_alloc(dev[GPU], (size_t)(n * n) * sizeof(float), &a, &err), 0);
	assert_int_equal(ops[GPU]->mem_alloc(dev[GPU], (size_t)(n * n) * sizeof(float), &c, &err), 0);
	assert_int_equal(ops[GPU]->kernel(stream[GPU],
					  &(struct hb_kernel){ .op = HB_K_FILL_HASH, .y = a, .n = n * n, .a = 1e-2f,
							       .seed = 50 },
					  &err),
			 0);
	assert_int_equal(ops[GPU]->event_create(dev[GPU], &e0, &err), 0);
	assert_int_equal(ops[GPU]->event_create(dev[GPU], &e1, &err), 0);
	assert_int_equal(ops[GPU]->event_record(stream[GPU], e0, &err), 0);
	for (int i = 0; i < 8; i++) {  /* 8 x 17 GFLOP: milliseconds on any GPU */
		struct hb_gemm gm = { .m = n, .n = n, .k = n, .alpha = 1, .beta = 0, .a = a, .lda = n, .b = a, .ldb = n,
				      .c = c, .ldc = n, .batch = 1 };

		assert_int_equal(ops[GPU]->gemm(stream[GPU], &gm, &err), 0);
	}
	assert_int_equal(ops[GPU]->event_record(stream[GPU], e1, &err), 0);
	assert_int_equal(ops[GPU]->stream_sync(stream[GPU], &err), 0);
	assert_int_equal(ops[GPU]->event_elapsed(e0, e1, &sec, &err), 0);
	printf("8 GEMMs of %ld^3: %.3f ms (%.1f TFLOP/s)\n", n, 1e3 * sec, 8 * 2.0 * n * n * n / sec / 1e12);
	assert_true(sec > 0 && sec < 60);

	/* an event never recorded: an error, and one that the next kernel
	 * launch does not inherit */
	assert_int_equal(ops[GPU]->event_create(dev[GPU], &e2, &err), 0);
	assert_int_equal(ops[GPU]->event_elapsed(e0, e2, &sec, &err), -1);
	assert_non_null(strstr(err.msg, "cudaEventElapsedTime"));
	assert_int_equal(ops[GPU]->kernel(stream[GPU], &(struct hb_kernel){ .op = HB_K_FILL, .y = c, .n = 1, .a = 1 },
					  &err),
			 0);
	assert_int_equal(ops[GPU]->stream_sync(stream[GPU], &err), 0);

	ops[GPU]->event_destroy(e0);
	ops[GPU]->event_destroy(e1);
	ops[GPU]->event_destroy(e2);
	ops[GPU]->mem_free(dev[GPU], a);
	ops[GPU]->mem_free(dev[GPU], c);
}

static void test_copies(void **state)
{
	struct hb_error err = { 0 };
	struct buf x, y;

	(void)state;
	buf_floats(&x, 4099);
	buf_floats(&y, 4099);
	buf_hash(&x, 60, 2.0f);
	buf_hash(&y, 61, 2.0f);
	assert_int_equal(ops[GPU]->memcpy_d2d(stream[GPU], y.p[GPU], x.p[GPU], x.bytes, &err), 0);
	assert_int_equal(ops[CPU]->memcpy_d2d(stream[CPU], y.p[CPU], x.p[CPU], x.bytes, &err), 0);
	sync_both();
	expect_identical(&y, "memcpy_d2d");
	buf_free(&x);
	buf_free(&y);
}

struct worker {
	uint64_t seed;
	int ok;                  /* 1 when the thread's values were right */
	char msg[1024];          /* why not */
};

/* A VSW: its own stream on the shared device, a fill and a read-back. */
static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct hb_error err = { 0 };
	struct hb_stream *s = NULL;
	const long n = 1 << 20;
	float *h = malloc((size_t)n * sizeof(float));
	void *p = NULL;

	if (!h)
		return NULL;
	if (ops[GPU]->stream_create(dev[GPU], &s, &err) == 0 &&
	    ops[GPU]->mem_alloc(dev[GPU], (size_t)n * sizeof(float), &p, &err) == 0 &&
	    ops[GPU]->kernel(s, &(struct hb_kernel){ .op = HB_K_FILL_HASH, .y = p, .n = n, .a = 1, .seed = wk->seed },
			     &err) == 0 &&
	    ops[GPU]->memcpy_d2h(s, h, p, (size_t)n * sizeof(float), &err) == 0 && ops[GPU]->stream_sync(s, &err) == 0) {
		wk->ok = 1;
		for (long i = 0; i < n && wk->ok; i++)
			if (h[i] != hb_hash_unit(wk->seed, (uint64_t)i) - 0.5f) {
				snprintf(wk->msg, sizeof(wk->msg), "seed %llu element %ld: %.9g", (unsigned long long)wk->seed,
					 i, h[i]);
				wk->ok = 0;
			}
	} else {
		snprintf(wk->msg, sizeof(wk->msg), "%s", err.msg);
	}
	ops[GPU]->mem_free(dev[GPU], p);
	ops[GPU]->stream_destroy(s);
	free(h);
	return NULL;
}

static void test_threads(void **state)
{
	struct worker wk[4];
	pthread_t th[4];

	(void)state;
	for (int i = 0; i < 4; i++) {
		wk[i] = (struct worker){ .seed = 100 + (uint64_t)i };
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &wk[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		if (!wk[i].ok)
			fail_msg("worker %d: %s", i, wk[i].msg);
}

/* ------------------------------------------------------------------------ */
/* Without a GPU                                                            */

/* Whether a mapping of the process names libcublas (/proc/self/maps). */
static int cublas_mapped(void)
{
	char line[1024];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libcublas.so") != NULL;
	fclose(f);
	return found;
}

/* cuBLAS is loaded when first asked for, not at start (cublas_lazy.h), and
 * the table it gives is the toolkit's: no GPU needed for either. */
static void test_cublas_lazy(void **state)
{
	struct hb_error err = { 0 };
	const struct hb_cublas *cb;
	int major = -1;

	(void)state;
	assert_false(cublas_mapped());
	cb = hb_cublas(&err);
	if (!cb)
		fail_msg("hb_cublas: %s", err.msg);
	assert_true(cublas_mapped());
	assert_ptr_equal(hb_cublas(&err), cb); /* once per process */
	assert_int_equal(cb->get_property(MAJOR_VERSION, &major), CUBLAS_STATUS_SUCCESS);
	assert_int_equal(major, CUBLAS_VER_MAJOR);
	/* cuBLAS's own wording, one per status */
	assert_true(strlen(cb->status_string(CUBLAS_STATUS_NOT_INITIALIZED)) > 0);
	assert_string_not_equal(cb->status_string(CUBLAS_STATUS_NOT_INITIALIZED),
				cb->status_string(CUBLAS_STATUS_SUCCESS));
}

static void test_no_gpu(void **state)
{
	struct hb_device_config cfg = { .index = 0 };
	struct hb_error err = { 0 };
	static char sentinel;
	struct hb_device *d = (struct hb_device *)&sentinel;  /* open must clear it */
	const char *why = NULL;

	(void)state;
	assert_ptr_equal(hb_device_backend("cuda"), &hb_device_cuda);
	assert_ptr_equal(hb_device_backend("cpu"), &hb_device_cpu);
	assert_null(hb_device_backend("opencl"));
	assert_string_equal(hb_device_backend_names(), "cpu,cuda");

	assert_int_equal(hb_device_cuda.available(&why), 0);
	assert_non_null(why);
	assert_string_equal(why, "no CUDA device");
	assert_int_equal(hb_device_cuda.available(NULL), 0);
	/* opening anyway fails with a message, and leaves nothing open */
	assert_int_equal(hb_device_cuda.open(&cfg, &d, &err), -1);
	assert_null(d);
	assert_non_null(strstr(err.msg, "cuda backend"));
	printf("open without a GPU: %s\n", err.msg);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest gpu_tests[] = {
		cmocka_unit_test(test_info),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_elementwise),
		cmocka_unit_test(test_resize),
		cmocka_unit_test(test_im2col),
		cmocka_unit_test(test_softmax),
		cmocka_unit_test(test_heads),
		cmocka_unit_test(test_lstm),
		cmocka_unit_test(test_embedding),
		cmocka_unit_test(test_unknown_kernel),
		cmocka_unit_test(test_gemm),
		cmocka_unit_test(test_gemm_error),
		cmocka_unit_test(test_nomem),
		cmocka_unit_test(test_mem_limit),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_threads),
	};
	const struct CMUnitTest no_gpu_tests[] = {
		cmocka_unit_test(test_cublas_lazy), /* first: nothing has loaded cuBLAS yet */
		cmocka_unit_test(test_no_gpu),
	};
	const char *why = NULL;
	int have = hb_device_cuda.available(&why);

	if (argc > 1 && strcmp(argv[1], "--no-gpu") == 0) {
		if (have) {
			fprintf(stderr, "a CUDA device is present: skipped\n");
			return 77;
		}
		return cmocka_run_group_tests(no_gpu_tests, NULL, NULL);
	}
	if (!have) {
		fprintf(stderr, "cuda backend not available (%s): skipped\n", why);
		return 77;
	}
	return cmocka_run_group_tests(gpu_tests, setup, teardown);
}

#else /* !HB_HAVE_GPU */

/* Built without the toolkit: the registry has no cuda backend. */
static void test_no_cuda_backend(void **state)
{
	(void)state;
	assert_null(hb_device_backend("cuda"));
	assert_ptr_equal(hb_device_backend("cpu"), &hb_device_cpu);
	assert_string_equal(hb_device_backend_names(), "cpu");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_cuda_backend),
	};

	if (argc > 1 && strcmp(argv[1], "--no-gpu") == 0)
		return cmocka_run_group_tests(tests, NULL, NULL);
	fprintf(stderr, "built without the CUDA toolkit: skipped\n");
	return 77;
}

#endif
