/*
 * device_cuda.c: the cuda device backend (device.h): CUDA runtime, cuBLAS,
 * and the kernels of kernels.cu.
 *
 * What it is: a thin layer.  A VSW is a host thread with its own CUDA
 * stream (non-blocking, so VSW streams never wait on the legacy default
 * stream) and its own cuBLAS handle bound to it.  The CUDA current device
 * is per host thread, so every call that touches the device sets it first.
 * Operations are asynchronous: callers synchronise (stream_sync) before
 * reading results or event times.
 *
 * Memory: cudaMalloc, with the bytes counted per device so that
 * hb_device_config.mem_limit_bytes can cap the device below its size;
 * a request past the cap, or one cudaMalloc cannot satisfy, returns
 * HB_DEV_NOMEM.  cudaMalloc's out-of-memory error is not sticky but it
 * stays as the thread's "last error", which the next kernel launch check
 * would report; it is cleared here.
 *
 * GEMM: device.h's matrices are row-major and cuBLAS is column-major.  The
 * bytes of a row-major m x n matrix with row stride ld are those of its
 * transpose, column-major with leading dimension ld, so C = op(A) op(B) is
 * computed as C^T = op(B)^T op(A)^T: B and A swap places, m and n swap, the
 * transpose flags and leading dimensions stay as given.  Math mode is
 * cuBLAS's default (full FP32, no TF32), so results compare with the cpu
 * backend.
 *
 * The machine may have no GPU, or no driver: available() asks
 * cudaGetDeviceCount and nothing else runs until a device is opened.
 */
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>  /* defines: cudaMalloc, cudaStreamCreateWithFlags, cudaEventElapsedTime */
#include <library_types.h>     /* defines: MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL */

#include "cublas_lazy.h"       /* defines: hb_cublas (cuBLAS, loaded at first use) */
#include "device.h"            /* defines: struct hb_device_ops, struct hb_kernel, HB_DEV_NOMEM */
#include "kernels.h"           /* defines: hbk_* kernel launchers */

/* One live allocation, so mem_free can give its bytes back to the count. */
struct alloc {
	void *ptr;
	size_t bytes;
};

struct hb_device {
	int index;               /* CUDA device ordinal */
	char name[128];          /* cudaDeviceProp.name */
	int sm_major, sm_minor;  /* compute capability */
	double total;            /* device memory, bytes */
	double limit;            /* the cap: mem_limit_bytes, or total */
	int capped;              /* mem_limit_bytes was given */
	pthread_mutex_t mu;      /* guards used and allocs: VSW threads allocate concurrently */
	double used;             /* bytes allocated through this handle now */
	struct alloc *allocs;    /* live allocations, unordered */
	size_t nallocs, cap_allocs;
};

struct hb_stream {
	struct hb_device *dev;   /* owner */
	cudaStream_t s;          /* non-blocking stream */
	cublasHandle_t blas;     /* bound to s */
	const struct hb_cublas *cb; /* the cuBLAS entry points (cublas_lazy.h) */
};

struct hb_event {
	int index;               /* device the event was created on */
	cudaEvent_t e;           /* timing enabled */
};

/* Report rc, and clear it as the thread's last error so that the next
 * kernel launch check does not report it again (sticky errors stay). */
static int cuda_fail(struct hb_error *err, const char *what, cudaError_t rc)
{
	(void)cudaGetLastError();  /* its value is rc, reported below */
	return hb_runtime_error(err, "cuda backend: %s: %s (%s)", what, cudaGetErrorString(rc), cudaGetErrorName(rc));
}

static int blas_fail(struct hb_error *err, const struct hb_cublas *cb, const char *what, cublasStatus_t st)
{
	return hb_runtime_error(err, "cuda backend: %s: %s", what, cb->status_string(st));
}

/* Run a runtime call; on failure fill err and return -1 from the caller. */
#define CUDA_TRY(call, what)                                 \
	do {                                                 \
		cudaError_t rc_ = (call);                    \
		if (rc_ != cudaSuccess)                      \
			return cuda_fail(err, (what), rc_);  \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Device                                                                   */

static int cuda_available(const char **why)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
		if (why)
			*why = NULL;
		return 1;
	}
	/* Without a driver the error is also the thread's last error; leave
	 * nothing behind for a later launch check to trip on. */
	(void)cudaGetLastError();
	if (why)
		*why = "no CUDA device";
	return 0;
}

static int cuda_open(const struct hb_device_config *cfg, struct hb_device **out, struct hb_error *err)
{
	struct cudaDeviceProp prop;
	struct hb_device *d;
	int n = 0, index = cfg ? cfg->index : 0;
	double cap = cfg ? cfg->mem_limit_bytes : 0;

	*out = NULL;
	if (!(cap >= 0))
		return hb_input_error(err, "cuda backend: memory limit must be 0 (whole device) or positive, got %g bytes",
				      cap);
	CUDA_TRY(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
	if (index < 0 || index >= n)
		return hb_input_error(err, "cuda backend: device %d does not exist (%d visible)", index, n);
	CUDA_TRY(cudaSetDevice(index), "cudaSetDevice");
	CUDA_TRY(cudaFree(NULL), "initialising the device");  /* context now, so driver problems show here */
	CUDA_TRY(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");

	d = calloc(1, sizeof(*d));
	if (!d)
		return hb_runtime_error(err, "cuda backend: out of memory");
	d->index = index;
	snprintf(d->name, sizeof(d->name), "%.127s", prop.name);
	d->sm_major = prop.major;
	d->sm_minor = prop.minor;
	d->total = (double)prop.totalGlobalMem;
	d->capped = cap > 0;
	d->limit = cap > 0 && cap < d->total ? cap : d->total;
	pthread_mutex_init(&d->mu, NULL);
	*out = d;
	return 0;
}

/* Frees what is still allocated through this handle; the device itself is
 * not reset (other handles, and other libraries, may use it). */
static void cuda_close(struct hb_device *d)
{
	if (!d)
		return;
	if (d->nallocs && cudaSetDevice(d->index) == cudaSuccess)
		for (size_t i = 0; i < d->nallocs; i++)
			(void)cudaFree(d->allocs[i].ptr);  /* teardown: close cannot report */
	(void)cudaGetLastError();  /* and leaves no teardown failure to a later launch check */
	free(d->allocs);
	pthread_mutex_destroy(&d->mu);
	free(d);
}

/* The NVIDIA driver's version ("580.65.06") from the kernel module, or ""
 * where /proc does not say (no module loaded, another OS). */
static void nvidia_driver_version(char *out, size_t n)
{
	char line[512], *save = NULL, *mod;
	FILE *f = fopen("/proc/driver/nvidia/version", "r");

	out[0] = '\0';
	if (!f)
		return;
	/* "NVRM version: NVIDIA UNIX [Open] Kernel Module [for x86_64]  580.65.06  Release Build ..." */
	if (fgets(line, sizeof(line), f) && (mod = strstr(line, "Module")))
		for (char *tok = strtok_r(mod, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
			if (isdigit((unsigned char)tok[0]) && strchr(tok, '.') &&
			    strspn(tok, "0123456789.") == strlen(tok)) {
				snprintf(out, n, "%s", tok);
				break;
			}
	fclose(f);
}

/* CUDA's integer versions (13000) as "13.0". */
static void cuda_version_string(int v, char *out, size_t n)
{
	snprintf(out, n, "%d.%d", v / 1000, v % 1000 / 10);
}

static int cuda_info(struct hb_device *d, struct hb_device_info *o, struct hb_error *err)
{
	int drv = 0, rt = 0, major = 0, minor = 0, patch = 0, n = 0;
	const struct hb_cublas *cb;

	memset(o, 0, sizeof(*o));
	snprintf(o->backend, sizeof(o->backend), "cuda");
	snprintf(o->name, sizeof(o->name), "%s", d->name);
	CUDA_TRY(cudaDriverGetVersion(&drv), "cudaDriverGetVersion");
	CUDA_TRY(cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion");
	CUDA_TRY(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
	nvidia_driver_version(o->driver, sizeof(o->driver));
	if (!o->driver[0])
		cuda_version_string(drv, o->driver, sizeof(o->driver));
	cuda_version_string(rt, o->runtime, sizeof(o->runtime));
	if (!(cb = hb_cublas(&(struct hb_error){ 0 })) || /* a stream's creation reports why */
	    cb->get_property(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
	    cb->get_property(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
	    cb->get_property(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
		snprintf(o->blas, sizeof(o->blas), "cuBLAS");
	else
		snprintf(o->blas, sizeof(o->blas), "cuBLAS %d.%d.%d", major, minor, patch);
	o->index = d->index;
	o->sm_major = d->sm_major;
	o->sm_minor = d->sm_minor;
	o->total_bytes = d->limit;
	o->host_cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	o->ndevices = n;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */

/* Record a live allocation; d->mu held.  -1 when the table cannot grow. */
static int track(struct hb_device *d, void *ptr, size_t bytes)
{
	if (d->nallocs == d->cap_allocs) {
		size_t cap = d->cap_allocs ? 2 * d->cap_allocs : 64;
		struct alloc *a = realloc(d->allocs, cap * sizeof(*a));

		if (!a)
			return -1;
		d->allocs = a;
		d->cap_allocs = cap;
	}
	d->allocs[d->nallocs++] = (struct alloc){ ptr, bytes };
	return 0;
}

/* Forget a live allocation; its size, or 0 when it is not ours.  d->mu held. */
static size_t untrack(struct hb_device *d, void *ptr)
{
	for (size_t i = d->nallocs; i-- > 0;)
		if (d->allocs[i].ptr == ptr) {
			size_t bytes = d->allocs[i].bytes;

			d->allocs[i] = d->allocs[--d->nallocs];
			return bytes;
		}
	return 0;
}

static int cuda_mem_alloc(struct hb_device *d, size_t bytes, void **ptr, struct hb_error *err)
{
	void *p = NULL;
	cudaError_t rc;
	int over, lost;

	*ptr = NULL;
	pthread_mutex_lock(&d->mu);
	over = d->used + (double)bytes > d->limit;
	if (!over)
		d->used += (double)bytes;  /* reserved now, so concurrent requests see it */
	pthread_mutex_unlock(&d->mu);
	if (over)
		return HB_DEV_NOMEM;

	rc = cudaSetDevice(d->index);
	if (rc == cudaSuccess)
		rc = cudaMalloc(&p, bytes);
	pthread_mutex_lock(&d->mu);
	lost = rc == cudaSuccess && p && track(d, p, bytes) != 0;
	if (rc != cudaSuccess || lost)
		d->used -= (double)bytes;
	pthread_mutex_unlock(&d->mu);

	if (rc == cudaErrorMemoryAllocation) {
		(void)cudaGetLastError();  /* not sticky, but still the thread's last error */
		return HB_DEV_NOMEM;
	}
	if (rc != cudaSuccess)
		return cuda_fail(err, "cudaMalloc", rc);
	if (lost) {
		(void)cudaFree(p);  /* unwinding: the host-memory failure is the one to report */
		return hb_runtime_error(err, "cuda backend: out of host memory recording an allocation");
	}
	*ptr = p;
	return 0;
}

static void cuda_mem_free(struct hb_device *d, void *ptr)
{
	if (!ptr)
		return;
	pthread_mutex_lock(&d->mu);
	d->used -= (double)untrack(d, ptr);
	pthread_mutex_unlock(&d->mu);
	if (cudaSetDevice(d->index) != cudaSuccess || cudaFree(ptr) != cudaSuccess)
		(void)cudaGetLastError();  /* mem_free cannot report; keep the next launch check clean */
}

/* Free and total bytes now.  Capped: the cap, less what this handle holds,
 * and never more than the device has free. */
static int cuda_mem_info(struct hb_device *d, double *free_bytes, double *total_bytes, struct hb_error *err)
{
	size_t f = 0, t = 0;
	double fr, tot;

	CUDA_TRY(cudaSetDevice(d->index), "cudaSetDevice");
	CUDA_TRY(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
	fr = (double)f;
	tot = (double)t;
	if (d->capped) {
		pthread_mutex_lock(&d->mu);
		tot = d->limit;
		if (d->limit - d->used < fr)
			fr = d->limit - d->used;
		pthread_mutex_unlock(&d->mu);
	}
	if (free_bytes)
		*free_bytes = fr;
	if (total_bytes)
		*total_bytes = tot;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Streams and events                                                       */

static int cuda_stream_create(struct hb_device *d, struct hb_stream **out, struct hb_error *err)
{
	const struct hb_cublas *cb = hb_cublas(err);
	struct hb_stream *s;
	cudaError_t rc;
	cublasStatus_t st;

	*out = NULL;
	if (!cb)
		return -1;
	CUDA_TRY(cudaSetDevice(d->index), "cudaSetDevice");
	s = calloc(1, sizeof(*s));
	if (!s)
		return hb_runtime_error(err, "cuda backend: out of memory");
	s->dev = d;
	s->cb = cb;
	rc = cudaStreamCreateWithFlags(&s->s, cudaStreamNonBlocking);
	if (rc != cudaSuccess) {
		free(s);
		return cuda_fail(err, "cudaStreamCreateWithFlags", rc);
	}
	st = cb->create(&s->blas);
	if (st == CUBLAS_STATUS_SUCCESS)
		st = cb->set_stream(s->blas, s->s);
	if (st == CUBLAS_STATUS_SUCCESS)
		st = cb->set_math_mode(s->blas, CUBLAS_DEFAULT_MATH);  /* FP32, no TF32 */
	if (st != CUBLAS_STATUS_SUCCESS) {
		if (s->blas)
			(void)cb->destroy(s->blas);  /* unwinding: the first failure is the one reported */
		(void)cudaStreamDestroy(s->s);  /* unwinding, likewise */
		free(s);
		return blas_fail(err, cb, "cublasCreate", st);
	}
	*out = s;
	return 0;
}

static void cuda_stream_destroy(struct hb_stream *s)
{
	if (!s)
		return;
	if (cudaSetDevice(s->dev->index) == cudaSuccess) {
		(void)s->cb->destroy(s->blas);  /* teardown: stream_destroy cannot report */
		(void)cudaStreamDestroy(s->s);  /* teardown, likewise */
	}
	(void)cudaGetLastError();  /* leave no teardown failure to a later launch check */
	free(s);
}

static int cuda_stream_sync(struct hb_stream *s, struct hb_error *err)
{
	CUDA_TRY(cudaStreamSynchronize(s->s), "cudaStreamSynchronize");
	return 0;
}

static int cuda_device_sync(struct hb_device *d, struct hb_error *err)
{
	CUDA_TRY(cudaSetDevice(d->index), "cudaSetDevice");
	CUDA_TRY(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	return 0;
}

static int cuda_event_create(struct hb_device *d, struct hb_event **out, struct hb_error *err)
{
	struct hb_event *e;
	cudaError_t rc;

	*out = NULL;
	CUDA_TRY(cudaSetDevice(d->index), "cudaSetDevice");
	e = calloc(1, sizeof(*e));
	if (!e)
		return hb_runtime_error(err, "cuda backend: out of memory");
	e->index = d->index;
	rc = cudaEventCreate(&e->e);
	if (rc != cudaSuccess) {
		free(e);
		return cuda_fail(err, "cudaEventCreate", rc);
	}
	*out = e;
	return 0;
}

static void cuda_event_destroy(struct hb_event *e)
{
	if (!e)
		return;
	if (cudaSetDevice(e->index) != cudaSuccess || cudaEventDestroy(e->e) != cudaSuccess)
		(void)cudaGetLastError();  /* event_destroy cannot report; keep the next launch check clean */
	free(e);
}

static int cuda_event_record(struct hb_stream *s, struct hb_event *e, struct hb_error *err)
{
	CUDA_TRY(cudaSetDevice(s->dev->index), "cudaSetDevice");
	CUDA_TRY(cudaEventRecord(e->e, s->s), "cudaEventRecord");
	return 0;
}

static int cuda_event_elapsed(struct hb_event *a, struct hb_event *b, double *seconds, struct hb_error *err)
{
	float ms = 0;

	CUDA_TRY(cudaEventElapsedTime(&ms, a->e, b->e), "cudaEventElapsedTime");
	*seconds = 1e-3 * (double)ms;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Copies                                                                   */

static int cuda_memcpy(struct hb_stream *s, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
		       const char *what, struct hb_error *err)
{
	if (!bytes)
		return 0;
	CUDA_TRY(cudaSetDevice(s->dev->index), "cudaSetDevice");
	CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, s->s), what);
	return 0;
}

static int cuda_memcpy_h2d(struct hb_stream *s, void *dst, const void *src, size_t bytes, struct hb_error *err)
{
	return cuda_memcpy(s, dst, src, bytes, cudaMemcpyHostToDevice, "cudaMemcpyAsync (host to device)", err);
}

static int cuda_memcpy_d2d(struct hb_stream *s, void *dst, const void *src, size_t bytes, struct hb_error *err)
{
	return cuda_memcpy(s, dst, src, bytes, cudaMemcpyDeviceToDevice, "cudaMemcpyAsync (device to device)", err);
}

static int cuda_memcpy_d2h(struct hb_stream *s, void *dst, const void *src, size_t bytes, struct hb_error *err)
{
	return cuda_memcpy(s, dst, src, bytes, cudaMemcpyDeviceToHost, "cudaMemcpyAsync (device to host)", err);
}

/* ------------------------------------------------------------------------ */
/* Compute                                                                  */

static int fits_int(long v)
{
	return v >= 0 && v <= 2147483647L;
}

/* Row-major C = op(A) op(B) as column-major C^T = op(B)^T op(A)^T (see the
 * top of the file). */
static int cuda_gemm(struct hb_stream *s, const struct hb_gemm *g, struct hb_error *err)
{
	cublasOperation_t opa = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasOperation_t opb = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasStatus_t st;

	if (!fits_int(g->m) || !fits_int(g->n) || !fits_int(g->k) || !fits_int(g->lda) || !fits_int(g->ldb) ||
	    !fits_int(g->ldc) || g->batch < 1 || !fits_int(g->batch))
		return hb_runtime_error(err, "cuda backend: gemm with m %ld n %ld k %ld lda %ld ldb %ld ldc %ld batch %ld",
					g->m, g->n, g->k, g->lda, g->ldb, g->ldc, g->batch);
	CUDA_TRY(cudaSetDevice(s->dev->index), "cudaSetDevice");
	if (g->batch == 1)
		st = s->cb->sgemm(s->blas, opb, opa, (int)g->n, (int)g->m, (int)g->k, &g->alpha, g->b, (int)g->ldb,
				 g->a, (int)g->lda, &g->beta, g->c, (int)g->ldc);
	else
		st = s->cb->sgemm_strided_batched(s->blas, opb, opa, (int)g->n, (int)g->m, (int)g->k, &g->alpha, g->b,
					       (int)g->ldb, g->stride_b, g->a, (int)g->lda, g->stride_a, &g->beta,
					       g->c, (int)g->ldc, g->stride_c, (int)g->batch);
	if (st != CUBLAS_STATUS_SUCCESS)
		return hb_runtime_error(err, "cuda backend: gemm (%s) m %ld n %ld k %ld lda %ld ldb %ld ldc %ld%s: %s",
					g->batch == 1 ? "cublasSgemm" : "cublasSgemmStridedBatched", g->m, g->n, g->k,
					g->lda, g->ldb, g->ldc, g->trans_a ? (g->trans_b ? " A^T B^T" : " A^T") :
					g->trans_b ? " B^T" : "", s->cb->status_string(st));
	return 0;
}

static const char *const kernel_names[HB_K_NOP_COUNT] = {
	[HB_K_FILL] = "FILL",
	[HB_K_FILL_HASH] = "FILL_HASH",
	[HB_K_AXPY] = "AXPY",
	[HB_K_SCALE] = "SCALE",
	[HB_K_RELU_FWD] = "RELU_FWD",
	[HB_K_RELU_BWD] = "RELU_BWD",
	[HB_K_RESIZE_FWD] = "RESIZE_FWD",
	[HB_K_RESIZE_BWD] = "RESIZE_BWD",
	[HB_K_IM2COL] = "IM2COL",
	[HB_K_COL2IM] = "COL2IM",
	[HB_K_SOFTMAX_FWD] = "SOFTMAX_FWD",
	[HB_K_SOFTMAX_BWD] = "SOFTMAX_BWD",
	[HB_K_SPLIT_HEADS] = "SPLIT_HEADS",
	[HB_K_MERGE_HEADS] = "MERGE_HEADS",
	[HB_K_LSTM_CELL_FWD] = "LSTM_CELL_FWD",
	[HB_K_LSTM_CELL_BWD] = "LSTM_CELL_BWD",
	[HB_K_GATHER_ROWS] = "GATHER_ROWS",
	[HB_K_SCATTER_ADD_ROWS] = "SCATTER_ADD_ROWS",
	[HB_K_MSE_GRAD] = "MSE_GRAD",
	[HB_K_SGD_MOMENTUM] = "SGD_MOMENTUM",
	[HB_K_ADAM] = "ADAM",
};

/* Map struct hb_kernel's fields onto each launcher as device.h assigns them. */
static int cuda_kernel(struct hb_stream *s, const struct hb_kernel *k, struct hb_error *err)
{
	cudaStream_t q = s->s;
	cudaError_t rc;

	if ((int)k->op < 0 || k->op >= HB_K_NOP_COUNT)
		return hb_runtime_error(err, "cuda backend: unknown kernel %d", (int)k->op);
	CUDA_TRY(cudaSetDevice(s->dev->index), "cudaSetDevice");
	switch (k->op) {
	case HB_K_FILL:
		rc = hbk_fill(q, k->y, k->n, k->a);
		break;
	case HB_K_FILL_HASH:
		rc = hbk_fill_hash(q, k->y, k->n, k->a, k->seed);
		break;
	case HB_K_AXPY:
		rc = hbk_axpy(q, k->y, k->x, k->n, k->a);
		break;
	case HB_K_SCALE:
		rc = hbk_scale(q, k->y, k->n, k->a);
		break;
	case HB_K_RELU_FWD:
		rc = hbk_relu_fwd(q, k->y, k->x, k->n);
		break;
	case HB_K_RELU_BWD:
		rc = hbk_relu_bwd(q, k->z, k->x, k->y, k->n);
		break;
	case HB_K_RESIZE_FWD:
		rc = hbk_resize_fwd(q, k->y, k->x, k->rows, k->cols, k->ld);
		break;
	case HB_K_RESIZE_BWD:
		rc = hbk_resize_bwd(q, k->y, k->x, k->rows, k->cols, k->ld);
		break;
	case HB_K_IM2COL:
		rc = hbk_im2col(q, k->y, k->x, k->rows, k->cols, k->ld, k->taps);
		break;
	case HB_K_COL2IM:
		rc = hbk_col2im(q, k->y, k->x, k->rows, k->cols, k->ld, k->taps);
		break;
	case HB_K_SOFTMAX_FWD:
		rc = hbk_softmax_fwd(q, k->y, k->x, k->rows, k->cols, k->a);
		break;
	case HB_K_SOFTMAX_BWD:
		rc = hbk_softmax_bwd(q, k->z, k->x, k->y, k->rows, k->cols, k->a);
		break;
	case HB_K_SPLIT_HEADS:
		/* the packed input is only read */
		rc = hbk_split_heads(q, 1, (float *)k->x, k->y, k->z, k->w, k->rows, k->cols, k->ld, k->taps);
		break;
	case HB_K_MERGE_HEADS:
		if (k->w)  /* the adjoint of SPLIT_HEADS: dq, dk, dv (only read) -> packed */
			rc = hbk_split_heads(q, 0, k->y, (float *)k->x, k->z, k->w, k->rows, k->cols, k->ld, k->taps);
		else
			rc = hbk_merge_heads(q, k->y, k->x, k->rows, k->cols, k->ld, k->taps);
		break;
	case HB_K_LSTM_CELL_FWD:
		rc = hbk_lstm_fwd(q, k->y, k->x, k->z, k->w, k->rows, k->cols, k->ld);
		break;
	case HB_K_LSTM_CELL_BWD:
		rc = hbk_lstm_bwd(q, k->y, k->x, k->v, k->z, k->w, k->rows, k->cols, k->ld);
		break;
	case HB_K_GATHER_ROWS:
		rc = hbk_gather_rows(q, k->y, k->x, k->idx, k->rows, k->cols);
		break;
	case HB_K_SCATTER_ADD_ROWS:
		rc = hbk_scatter_add_rows(q, k->y, k->x, k->idx, k->rows, k->cols);
		break;
	case HB_K_MSE_GRAD:
		rc = hbk_mse_grad(q, k->z, k->y, k->x, k->n, k->a);
		break;
	case HB_K_SGD_MOMENTUM:
		rc = hbk_sgd_momentum(q, k->y, k->x, k->z, k->n, k->a, k->b, k->c);
		break;
	case HB_K_ADAM: {
		/* the bias corrections as the cpu backend computes them */
		float bc1 = 1.0f - powf(k->b, (float)k->step), bc2 = 1.0f - powf(k->c, (float)k->step);

		rc = hbk_adam(q, k->y, k->x, k->z, k->w, k->n, k->a, k->b, k->c, k->d, k->e, bc1, bc2);
		break;
	}
	default:
		return hb_runtime_error(err, "cuda backend: unknown kernel %d", (int)k->op);
	}
	if (rc != cudaSuccess)
		return hb_runtime_error(err, "cuda backend: kernel %s: %s (%s)", kernel_names[k->op],
					cudaGetErrorString(rc), cudaGetErrorName(rc));
	return 0;
}

const struct hb_device_ops hb_device_cuda = {
	.name = "cuda",
	.available = cuda_available,
	.open = cuda_open,
	.close = cuda_close,
	.info = cuda_info,
	.mem_alloc = cuda_mem_alloc,
	.mem_free = cuda_mem_free,
	.mem_info = cuda_mem_info,
	.stream_create = cuda_stream_create,
	.stream_destroy = cuda_stream_destroy,
	.stream_sync = cuda_stream_sync,
	.device_sync = cuda_device_sync,
	.event_create = cuda_event_create,
	.event_destroy = cuda_event_destroy,
	.event_record = cuda_event_record,
	.event_elapsed = cuda_event_elapsed,
	.memcpy_h2d = cuda_memcpy_h2d,
	.memcpy_d2d = cuda_memcpy_d2d,
	.memcpy_d2h = cuda_memcpy_d2h,
	.gemm = cuda_gemm,
	.kernel = cuda_kernel,
};
