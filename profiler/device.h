/*
 * device.h: one interface over the devices the profiler measures.
 *
 * A backend is a table of operations (struct hb_device_ops), in the style of
 * the simulator's agent and arbiter ops: the runner, the workloads and the
 * memory search never know which backend they drive.  Two backends exist:
 *
 *   cpu   (device_cpu.c)  OpenBLAS CBLAS, single-threaded per worker; each
 *         virtual stream worker (VSW) is a host thread and its "stream" is a
 *         handle whose operations run synchronously in the calling thread;
 *         timestamps are clock_gettime(CLOCK_MONOTONIC).  Memory is host
 *         memory counted against a budget (the device's "capacity"), so the
 *         memory search finds a limit exactly as on a GPU.
 *   cuda  (device_cuda.c, kernels.cu; only when built with the toolkit)
 *         CUDA runtime, cuBLAS, elementwise kernels from nvcc; one CUDA
 *         stream (with its own cuBLAS handle) per VSW; timestamps are CUDA
 *         events.
 *
 * Threading contract: one hb_device may be used from several threads at
 * once, each with its own stream.  A stream is used by one thread at a time.
 * Operations on a stream are ordered; whether they have finished when the
 * call returns is the backend's business (cpu: yes, cuda: no), so callers
 * synchronise with stream_sync before reading results or timestamps.
 *
 * Memory: mem_alloc returns HB_DEV_NOMEM (not an error) when the request
 * does not fit, the one result the memory search is built on.  Device
 * pointers are opaque to the caller except through the operations below.
 *
 * Every operation that can fail returns 0 or -1 with err filled, except
 * mem_alloc, which also returns HB_DEV_NOMEM.  Errors name the operation and
 * the backend's own message (cudaGetErrorString, ...).
 *
 * Layout conventions for the compute operations: matrices are row-major
 * float32 with explicit leading dimensions (elements between rows); all
 * element counts are in floats unless the name says bytes.
 */
#ifndef HB_DEVICE_H
#define HB_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "hb_config.h"

#define HB_DEV_NOMEM 1   /* mem_alloc: the request does not fit (not an error) */

struct hb_device;        /* backend-owned: one opened device */
struct hb_stream;        /* backend-owned: one ordered queue of work (a VSW's) */
struct hb_event;         /* backend-owned: a point in a stream's timeline */

/* What a backend reports about an opened device (for the run row). */
struct hb_device_info {
	char backend[16];         /* "cpu", "cuda" */
	char name[128];           /* as the driver reports it ("NVIDIA H100 80GB HBM3"), or the CPU model */
	char driver[32];          /* driver version ("580.65.06"), "" for cpu */
	char runtime[32];         /* CUDA runtime version ("13.0"), "" for cpu */
	char blas[64];            /* "cuBLAS 13.0.0", "OpenBLAS 0.3.21 (1 thread)" */
	int index;                /* device ordinal */
	int sm_major, sm_minor;   /* compute capability, 0 for cpu */
	double total_bytes;       /* device memory (cpu: the budget) */
	int host_cores;           /* online host CPU cores (for the artifact's VSW cap) */
	int ndevices;             /* devices of this backend visible to the process */
};

/* Options for opening a device. */
struct hb_device_config {
	int index;                /* device ordinal (cuda), ignored by cpu */
	double mem_limit_bytes;   /* cpu: memory budget (> 0 required); cuda: 0 = the whole device, else a
				   * cap below it (tests, what-if) */
};

/* Row-major GEMM, optionally strided-batched:
 *   for i in [0, batch):  C_i = alpha * op(A_i) * op(B_i) + beta * C_i
 * op(X) = X or X^T as trans_a / trans_b say; op(A) is m x k, op(B) k x n,
 * C m x n.  lda/ldb/ldc are the row strides of the matrices as stored
 * (A stored m x k when not transposed, k x m when transposed; same for B).
 * stride_* are the element offsets between consecutive batch members. */
struct hb_gemm {
	int trans_a, trans_b;
	long m, n, k;
	float alpha, beta;
	const float *a; long lda; long stride_a;
	const float *b; long ldb; long stride_b;
	float *c; long ldc; long stride_c;
	long batch;               /* >= 1 */
};

/*
 * Elementwise and small kernels a training step needs.  Each names the
 * fields of struct hb_kernel it reads; every backend implements each with
 * exactly this meaning (tests compare the cuda backend with the cpu one).
 * n is a count of floats unless stated.
 */
enum hb_kernel_op {
	HB_K_FILL,            /* y[i] = a                                                  (y, n, a) */
	HB_K_FILL_HASH,       /* y[i] = a * (u(seed, i) - 0.5), u a counter hash in [0,1)  (y, n, a, seed) */
	HB_K_AXPY,            /* y[i] += a * x[i]                                          (y, x, n, a) */
	HB_K_SCALE,           /* y[i] *= a                                                 (y, n, a) */
	HB_K_RELU_FWD,        /* y[i] = max(x[i], 0)  (y may equal x)                      (y, x, n) */
	HB_K_RELU_BWD,        /* dx[i] = y[i] > 0 ? dy[i] : 0 (x = dy, y = y_fwd, z = dx)  (z, x, y, n) */
	HB_K_RESIZE_FWD,      /* per sample: y[s][i] = x[s][i mod cols_in], i < cols_out   (y, x, rows = samples,
			       *   cols = cols_out, ld = cols_in) */
	HB_K_RESIZE_BWD,      /* the adjoint: dx[s][j] = sum over i < cols_out, i mod cols_in = j of dy[s][i]
			       *   (y = dx, x = dy, rows, cols = cols_out, ld = cols_in) */
	HB_K_IM2COL,          /* circular implicit-GEMM gather, per sample of `rows` samples with
			       *   tokens = t positions of c channels and taps k:
			       *   y[s][p][tap*c + ch] = x[s][(p + off(tap)) mod t][ch],
			       *   off(tap) = tap - k/2 (centred taps)   (y, x, rows, t = cols, c = ld, k = taps) */
	HB_K_COL2IM,          /* the adjoint of IM2COL: dx[s][q][ch] = sum_tap dy[s][(q - off(tap)) mod t][tap*c+ch]
			       *   (y = dx, x = dy, rows, cols = t, ld = c, taps) */
	HB_K_SOFTMAX_FWD,     /* row-wise softmax of rows x cols: y = softmax(a * x)       (y, x, rows, cols, a) */
	HB_K_SOFTMAX_BWD,     /* dx = a * y * (dy - sum_j dy_j y_j), row-wise (z = dx, x = dy, y = y_fwd, rows,
			       *   cols, a) */
	HB_K_SPLIT_HEADS,     /* [S samples][t][3][h][dh] -> q, k, v each [S][h][t][dh]
			       *   (x = packed input, y = q, z = k, w = v, rows = S, cols = t, ld = h, taps = dh) */
	HB_K_MERGE_HEADS,     /* [S][h][t][dh] -> [S][t][h][dh]; with w != NULL, the adjoint of SPLIT_HEADS:
			       *   y[S][t][3][h][dh] from x = dq, z = dk, w = dv
			       *   (y, x, [z, w], rows = S, cols = t, ld = h, taps = dh) */
	HB_K_LSTM_CELL_FWD,   /* one step for rows samples, hidden H = cols; g = gates [rows][4H] (i f g o,
			       *   pre-activation on entry, post-activation on exit), c_prev (x, may be NULL = 0),
			       *   c (z, out), h (w, out, row stride ld):
			       *   i,f,o = sigmoid, g = tanh; c = f c_prev + i g; h = o tanh(c)   (y = gates) */
	HB_K_LSTM_CELL_BWD,   /* the adjoint of one step: in dh (w, row stride ld), dc (z, in/out: on exit
			       *   d c_prev), gates post-activation (y, overwritten with d gates pre-activation),
			       *   c_prev (x, may be NULL), c (v) (rows, cols = H, ld) */
	HB_K_GATHER_ROWS,     /* embedding: y[r][:] = table[idx[r]][:], r < rows, width cols (y, x = table,
			       *   idx, rows, cols) */
	HB_K_SCATTER_ADD_ROWS,/* dtable[idx[r]][:] += dy[r][:] (y = dtable, x = dy, idx, rows, cols) */
	HB_K_MSE_GRAD,        /* dy[i] = a * (y[i] - t[i])                                 (z = dy, y, x = t, n, a) */
	HB_K_SGD_MOMENTUM,    /* PyTorch SGD: g' = g + wd w; m = mu m + g'; w -= lr m
			       *   (y = w, x = g, z = m, n, a = lr, b = mu, c = wd) */
	HB_K_ADAM,            /* PyTorch AdamW: w *= 1 - lr wd; m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
			       *   w -= lr (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps)
			       *   (y = w, x = g, z = m, w = v, n, a = lr, b = b1, c = b2, d = eps, e = wd, step = t) */
	HB_K_NOP_COUNT        /* number of kernels */
};

struct hb_kernel {
	enum hb_kernel_op op;
	float *y, *z, *w;         /* outputs / state, as the op says */
	const float *v;           /* second input (LSTM_CELL_BWD: c) */
	const float *x;           /* main input */
	const int32_t *idx;       /* row indices (GATHER_ROWS, SCATTER_ADD_ROWS) */
	long n;                   /* element count */
	long rows, cols, ld;      /* shapes, as the op says */
	long taps;                /* IM2COL/COL2IM taps, SPLIT/MERGE head dimension */
	float a, b, c, d, e;      /* scalars */
	uint64_t seed;            /* FILL_HASH */
	long step;                /* ADAM: 1-based step */
};

struct hb_device_ops {
	const char *name;         /* "cpu", "cuda" */

	/* 1 if the backend can run here (cuda: cudaGetDeviceCount finds a
	 * device); 0 with *why set to a one-line reason ("no CUDA device"). */
	int (*available)(const char **why);

	int (*open)(const struct hb_device_config *cfg, struct hb_device **out, struct hb_error *err);
	void (*close)(struct hb_device *dev);
	int (*info)(struct hb_device *dev, struct hb_device_info *out, struct hb_error *err);

	/* Memory.  mem_alloc: 0 ok, HB_DEV_NOMEM does not fit, -1 error.
	 * mem_info: free and total bytes now (cpu: of the budget). */
	int (*mem_alloc)(struct hb_device *dev, size_t bytes, void **ptr, struct hb_error *err);
	void (*mem_free)(struct hb_device *dev, void *ptr);
	int (*mem_info)(struct hb_device *dev, double *free_bytes, double *total_bytes, struct hb_error *err);

	/* Streams and events. */
	int (*stream_create)(struct hb_device *dev, struct hb_stream **out, struct hb_error *err);
	void (*stream_destroy)(struct hb_stream *s);
	int (*stream_sync)(struct hb_stream *s, struct hb_error *err);
	int (*device_sync)(struct hb_device *dev, struct hb_error *err);
	int (*event_create)(struct hb_device *dev, struct hb_event **out, struct hb_error *err);
	void (*event_destroy)(struct hb_event *e);
	int (*event_record)(struct hb_stream *s, struct hb_event *e, struct hb_error *err);
	/* Seconds from a to b; both recorded and their streams synchronised. */
	int (*event_elapsed)(struct hb_event *a, struct hb_event *b, double *seconds, struct hb_error *err);

	/* Copies on a stream: host to device (data loading) and device to device
	 * (weight copy).  The host buffer must stay valid until the stream syncs. */
	int (*memcpy_h2d)(struct hb_stream *s, void *dst, const void *src, size_t bytes, struct hb_error *err);
	int (*memcpy_d2d)(struct hb_stream *s, void *dst, const void *src, size_t bytes, struct hb_error *err);
	int (*memcpy_d2h)(struct hb_stream *s, void *dst, const void *src, size_t bytes, struct hb_error *err);

	/* Compute. */
	int (*gemm)(struct hb_stream *s, const struct hb_gemm *g, struct hb_error *err);
	int (*kernel)(struct hb_stream *s, const struct hb_kernel *k, struct hb_error *err);
};

/* The backend of that name ("cpu", "cuda"), or NULL when unknown or not
 * built into this binary (cuda without the toolkit). */
const struct hb_device_ops *hb_device_backend(const char *name);

/* Names of the built-in backends, comma-separated, for help and errors. */
const char *hb_device_backend_names(void);

/* The backends themselves (device_cpu.c, device_cuda.c). */
extern const struct hb_device_ops hb_device_cpu;
#if HB_HAVE_GPU
extern const struct hb_device_ops hb_device_cuda;
#endif

/* Shared by both backends' FILL_HASH: a counter-based hash in [0, 1), the
 * same value for (seed, i) on every backend (splitmix64 of seed ^ i). */
static inline float hb_hash_unit(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (float)(z >> 40) * (1.0f / 16777216.0f);
}

#endif
