/*
 * device_cpu.c: the cpu device backend (device.h).
 *
 * What it is: the same operations as the cuda backend, run on host memory so
 * the profiler, the memory search and the live executor take the same code
 * paths on a machine with no GPU.  A VSW is a host thread; its stream is a
 * handle whose operations run synchronously in the calling thread, so a
 * timestamp taken after an operation returns is the operation's end.  GEMMs
 * go to OpenBLAS's CBLAS limited to one thread, so n VSW threads use n
 * cores, as n CUDA streams share one GPU.  Without OpenBLAS, GSL's CBLAS.
 *
 * OpenBLAS is loaded with dlopen(RTLD_LOCAL), not linked: linked, it would
 * export cblas_* into the process's global scope and GSL (which every
 * solver and the forecaster use) would bind to it instead of its own
 * CBLAS, changing their rounding and, with OpenBLAS's threads, their
 * determinism.  Each opened device keeps its own handle and pointers.
 *
 * Memory is counted against a budget (hb_device_config.mem_limit_bytes):
 * an allocation that would pass it returns HB_DEV_NOMEM, so the memory
 * search finds a limit exactly as it does on a GPU.  Each block carries a
 * small header with its size so mem_free can give the bytes back.
 *
 * The kernels below are the reference semantics of device.h's enum
 * hb_kernel_op; the cuda backend's test compares against them.
 */
#define _GNU_SOURCE      /* sched_getaffinity, CPU_COUNT */
#include <dlfcn.h>
#include <math.h>
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_cblas.h> /* defines: cblas_sgemm (GSL's CBLAS, the fallback), the CBLAS enums */

#include "device.h"

/* CBLAS's sgemm, as OpenBLAS and GSL both export it. */
typedef void sgemm_fn(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int, float,
		      const float *, int, const float *, int, float, float *, int);

#define BLOCK_HEADER 64  /* bytes before each block: its size; keeps 64-byte alignment */

struct hb_device {
	double limit;            /* budget, bytes */
	double used;             /* bytes allocated now (blocks, without headers) */
	pthread_mutex_t mu;      /* guards used: VSW threads allocate concurrently */
	void *blas_handle;       /* dlopen handle of OpenBLAS, NULL when GSL's CBLAS is used */
	sgemm_fn *sgemm;         /* OpenBLAS's cblas_sgemm or GSL's */
	char blas[64];           /* which, for info() */
};

/* OpenBLAS, one thread per caller, or GSL's CBLAS. */
static void load_blas(struct hb_device *d)
{
	static const char *const names[] = { "libopenblas.so.0", "libopenblas.so" };

	d->sgemm = cblas_sgemm;
	snprintf(d->blas, sizeof(d->blas), "GSL CBLAS (OpenBLAS not found)");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		sgemm_fn *f;
		void (*set_threads)(int);
		char *(*config)(void);

		if (!h)
			continue;
		*(void **)&f = dlsym(h, "cblas_sgemm");
		*(void **)&set_threads = dlsym(h, "openblas_set_num_threads");
		*(void **)&config = dlsym(h, "openblas_get_config");
		if (!f) {
			dlclose(h);
			continue;
		}
		if (set_threads)
			set_threads(1);
		d->blas_handle = h;
		d->sgemm = f;
		snprintf(d->blas, sizeof(d->blas), "%.40s, 1 thread per worker", config ? config() : "OpenBLAS");
		return;
	}
}

struct hb_stream {
	struct hb_device *dev;   /* owner */
};

struct hb_event {
	double t;                /* CLOCK_MONOTONIC seconds when recorded, < 0 before */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cpu_available(const char **why)
{
	if (why)
		*why = NULL;
	return 1;
}

static int cpu_open(const struct hb_device_config *cfg, struct hb_device **out, struct hb_error *err)
{
	struct hb_device *d;

	if (!cfg || !(cfg->mem_limit_bytes > 0))
		return hb_input_error(err, "cpu backend: memory budget must be positive, got %g bytes",
				      cfg ? cfg->mem_limit_bytes : 0.0);
	d = calloc(1, sizeof(*d));
	if (!d)
		return hb_runtime_error(err, "cpu backend: out of memory");
	d->limit = cfg->mem_limit_bytes;
	pthread_mutex_init(&d->mu, NULL);
	load_blas(d);
	*out = d;
	return 0;
}

static void cpu_close(struct hb_device *d)
{
	if (!d)
		return;
	pthread_mutex_destroy(&d->mu);
	if (d->blas_handle)
		dlclose(d->blas_handle);
	free(d);
}

/* "model name : Intel(R) Xeon(R) ..." from /proc/cpuinfo, else "cpu". */
static void cpu_model_name(char *out, size_t n)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(out, n, "cpu");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) != 0 || !colon)
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(out, n, "%s", colon);
		break;
	}
	fclose(f);
}

static int cpu_info(struct hb_device *d, struct hb_device_info *o, struct hb_error *err)
{
	(void)err;
	memset(o, 0, sizeof(*o));
	snprintf(o->backend, sizeof(o->backend), "cpu");
	cpu_model_name(o->name, sizeof(o->name));
	snprintf(o->blas, sizeof(o->blas), "%s", d->blas);
	o->total_bytes = d->limit;
	{
		/* the cores this process may run on (taskset, cgroups), which
		 * is what its VSW threads get, not every core of the host */
		cpu_set_t set;

		o->host_cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
									      : (int)sysconf(_SC_NPROCESSORS_ONLN);
	}
	o->ndevices = 1;
	return 0;
}

static int cpu_mem_alloc(struct hb_device *d, size_t bytes, void **ptr, struct hb_error *err)
{
	void *p = NULL;
	int over;

	*ptr = NULL;
	pthread_mutex_lock(&d->mu);
	over = d->used + (double)bytes > d->limit;
	if (!over)
		d->used += (double)bytes;
	pthread_mutex_unlock(&d->mu);
	if (over)
		return HB_DEV_NOMEM;
	if (posix_memalign(&p, BLOCK_HEADER, bytes + BLOCK_HEADER) != 0 || !p) {
		pthread_mutex_lock(&d->mu);
		d->used -= (double)bytes;
		pthread_mutex_unlock(&d->mu);
		/* The budget allowed it but the host could not: that is the host
		 * running out, which the memory search must see as "does not fit". */
		(void)err;
		return HB_DEV_NOMEM;
	}
	*(size_t *)p = bytes;
	*ptr = (char *)p + BLOCK_HEADER;
	return 0;
}

static void cpu_mem_free(struct hb_device *d, void *ptr)
{
	char *base;

	if (!ptr)
		return;
	base = (char *)ptr - BLOCK_HEADER;
	pthread_mutex_lock(&d->mu);
	d->used -= (double)*(size_t *)base;
	pthread_mutex_unlock(&d->mu);
	free(base);
}

static int cpu_mem_info(struct hb_device *d, double *free_bytes, double *total_bytes, struct hb_error *err)
{
	(void)err;
	pthread_mutex_lock(&d->mu);
	if (free_bytes)
		*free_bytes = d->limit - d->used;
	if (total_bytes)
		*total_bytes = d->limit;
	pthread_mutex_unlock(&d->mu);
	return 0;
}

static int cpu_stream_create(struct hb_device *d, struct hb_stream **out, struct hb_error *err)
{
	struct hb_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return hb_runtime_error(err, "cpu backend: out of memory");
	s->dev = d;
	*out = s;
	return 0;
}

static void cpu_stream_destroy(struct hb_stream *s)
{
	free(s);
}

static int cpu_sync(struct hb_stream *s, struct hb_error *err)
{
	(void)s;
	(void)err;
	return 0;
}

static int cpu_device_sync(struct hb_device *d, struct hb_error *err)
{
	(void)d;
	(void)err;
	return 0;
}

static int cpu_event_create(struct hb_device *d, struct hb_event **out, struct hb_error *err)
{
	struct hb_event *e = malloc(sizeof(*e));

	(void)d;
	if (!e)
		return hb_runtime_error(err, "cpu backend: out of memory");
	e->t = -1;
	*out = e;
	return 0;
}

static void cpu_event_destroy(struct hb_event *e)
{
	free(e);
}

static int cpu_event_record(struct hb_stream *s, struct hb_event *e, struct hb_error *err)
{
	(void)s;
	(void)err;
	e->t = now_s();
	return 0;
}

static int cpu_event_elapsed(struct hb_event *a, struct hb_event *b, double *seconds, struct hb_error *err)
{
	if (a->t < 0 || b->t < 0)
		return hb_runtime_error(err, "cpu backend: elapsed time of an event that was never recorded");
	*seconds = b->t - a->t;
	return 0;
}

static int cpu_memcpy(struct hb_stream *s, void *dst, const void *src, size_t bytes, struct hb_error *err)
{
	(void)s;
	(void)err;
	if (bytes)
		memmove(dst, src, bytes);
	return 0;
}

static int cpu_gemm(struct hb_stream *s, const struct hb_gemm *g, struct hb_error *err)
{
	if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 1)
		return hb_runtime_error(err, "cpu backend: gemm with m %ld n %ld k %ld batch %ld", g->m, g->n, g->k,
					g->batch);
	for (long i = 0; i < g->batch; i++)
		s->dev->sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans,
			    g->trans_b ? CblasTrans : CblasNoTrans, (int)g->m, (int)g->n, (int)g->k, g->alpha,
			    g->a + i * g->stride_a, (int)g->lda, g->b + i * g->stride_b, (int)g->ldb, g->beta,
			    g->c + i * g->stride_c, (int)g->ldc);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Kernels: the reference semantics of enum hb_kernel_op (device.h).        */

static float sigmoidf(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

static long imod(long a, long m)
{
	long r = a % m;

	return r < 0 ? r + m : r;
}

static void k_softmax_fwd(const struct hb_kernel *k)
{
	for (long r = 0; r < k->rows; r++) {
		const float *x = k->x + r * k->cols;
		float *y = k->y + r * k->cols;
		float mx = -INFINITY, sum = 0;

		for (long j = 0; j < k->cols; j++)
			mx = fmaxf(mx, k->a * x[j]);
		for (long j = 0; j < k->cols; j++) {
			y[j] = expf(k->a * x[j] - mx);
			sum += y[j];
		}
		for (long j = 0; j < k->cols; j++)
			y[j] /= sum;
	}
}

static void k_softmax_bwd(const struct hb_kernel *k)
{
	for (long r = 0; r < k->rows; r++) {
		const float *dy = k->x + r * k->cols;
		const float *y = k->y + r * k->cols;
		float *dx = k->z + r * k->cols;
		float dot = 0;

		for (long j = 0; j < k->cols; j++)
			dot += dy[j] * y[j];
		for (long j = 0; j < k->cols; j++)
			dx[j] = k->a * y[j] * (dy[j] - dot);
	}
}

/* [S][t][3][h][dh] <-> q, k, v [S][h][t][dh] */
static void k_heads(const struct hb_kernel *k, int split)
{
	long S = k->rows, t = k->cols, h = k->ld, dh = k->taps;

	for (long s = 0; s < S; s++)
		for (long p = 0; p < t; p++)
			for (long which = 0; which < 3; which++) {
				float *qkv = which == 0 ? (split ? k->y : (float *)k->x)
						: which == 1 ? k->z : k->w;
				for (long hh = 0; hh < h; hh++) {
					long packed = (((s * t + p) * 3 + which) * h + hh) * dh;
					long headed = ((s * h + hh) * t + p) * dh;

					if (split)
						memcpy(qkv + headed, k->x + packed, (size_t)dh * sizeof(float));
					else
						memcpy(k->y + packed, qkv + headed, (size_t)dh * sizeof(float));
				}
			}
}

static void k_merge_heads(const struct hb_kernel *k)
{
	long S = k->rows, t = k->cols, h = k->ld, dh = k->taps;

	if (k->w) {
		k_heads(k, 0);
		return;
	}
	for (long s = 0; s < S; s++)
		for (long hh = 0; hh < h; hh++)
			for (long p = 0; p < t; p++)
				memcpy(k->y + ((s * t + p) * h + hh) * dh, k->x + ((s * h + hh) * t + p) * dh,
				       (size_t)dh * sizeof(float));
}

static void k_lstm_fwd(const struct hb_kernel *k)
{
	long H = k->cols;

	for (long r = 0; r < k->rows; r++) {
		float *g = k->y + r * 4 * H;
		float *c = k->z + r * H;
		float *h = k->w + r * k->ld;
		const float *cp = k->x ? k->x + r * H : NULL;

		for (long j = 0; j < H; j++) {
			float i = sigmoidf(g[j]), f = sigmoidf(g[H + j]), gg = tanhf(g[2 * H + j]),
			      o = sigmoidf(g[3 * H + j]);

			g[j] = i;
			g[H + j] = f;
			g[2 * H + j] = gg;
			g[3 * H + j] = o;
			c[j] = f * (cp ? cp[j] : 0.0f) + i * gg;
			h[j] = o * tanhf(c[j]);
		}
	}
}

static void k_lstm_bwd(const struct hb_kernel *k)
{
	long H = k->cols;

	for (long r = 0; r < k->rows; r++) {
		float *g = k->y + r * 4 * H;
		float *dc = k->z + r * H;
		const float *dh = k->w + r * k->ld;
		const float *c = k->v + r * H;
		const float *cp = k->x ? k->x + r * H : NULL;

		for (long j = 0; j < H; j++) {
			float i = g[j], f = g[H + j], gg = g[2 * H + j], o = g[3 * H + j];
			float tc = tanhf(c[j]);
			float dct = dc[j] + dh[j] * o * (1.0f - tc * tc);

			g[j] = dct * gg * i * (1.0f - i);
			g[H + j] = dct * (cp ? cp[j] : 0.0f) * f * (1.0f - f);
			g[2 * H + j] = dct * i * (1.0f - gg * gg);
			g[3 * H + j] = dh[j] * tc * o * (1.0f - o);
			dc[j] = dct * f;
		}
	}
}

static int cpu_kernel(struct hb_stream *s, const struct hb_kernel *k, struct hb_error *err)
{
	(void)s;
	switch (k->op) {
	case HB_K_FILL:
		for (long i = 0; i < k->n; i++)
			k->y[i] = k->a;
		break;
	case HB_K_FILL_HASH:
		for (long i = 0; i < k->n; i++)
			k->y[i] = k->a * (hb_hash_unit(k->seed, (uint64_t)i) - 0.5f);
		break;
	case HB_K_AXPY:
		for (long i = 0; i < k->n; i++)
			k->y[i] += k->a * k->x[i];
		break;
	case HB_K_SCALE:
		for (long i = 0; i < k->n; i++)
			k->y[i] *= k->a;
		break;
	case HB_K_RELU_FWD:
		for (long i = 0; i < k->n; i++)
			k->y[i] = k->x[i] > 0 ? k->x[i] : 0.0f;
		break;
	case HB_K_RELU_BWD:
		for (long i = 0; i < k->n; i++)
			k->z[i] = k->y[i] > 0 ? k->x[i] : 0.0f;
		break;
	case HB_K_RESIZE_FWD:
		for (long r = 0; r < k->rows; r++)
			for (long i = 0; i < k->cols; i++)
				k->y[r * k->cols + i] = k->x[r * k->ld + i % k->ld];
		break;
	case HB_K_RESIZE_BWD:
		for (long r = 0; r < k->rows; r++)
			for (long j = 0; j < k->ld; j++) {
				float sum = 0;

				for (long i = j; i < k->cols; i += k->ld)
					sum += k->x[r * k->cols + i];
				k->y[r * k->ld + j] = sum;
			}
		break;
	case HB_K_IM2COL: {
		long t = k->cols, c = k->ld, taps = k->taps;

		for (long r = 0; r < k->rows; r++)
			for (long p = 0; p < t; p++)
				for (long tap = 0; tap < taps; tap++)
					memcpy(k->y + ((r * t + p) * taps + tap) * c,
					       k->x + (r * t + imod(p + tap - taps / 2, t)) * c, (size_t)c * sizeof(float));
		break;
	}
	case HB_K_COL2IM: {
		long t = k->cols, c = k->ld, taps = k->taps;

		for (long r = 0; r < k->rows; r++)
			for (long q = 0; q < t; q++) {
				float *dx = k->y + (r * t + q) * c;

				for (long ch = 0; ch < c; ch++)
					dx[ch] = 0;
				for (long tap = 0; tap < taps; tap++) {
					const float *dy = k->x + ((r * t + imod(q - (tap - taps / 2), t)) * taps + tap) * c;

					for (long ch = 0; ch < c; ch++)
						dx[ch] += dy[ch];
				}
			}
		break;
	}
	case HB_K_SOFTMAX_FWD:
		k_softmax_fwd(k);
		break;
	case HB_K_SOFTMAX_BWD:
		k_softmax_bwd(k);
		break;
	case HB_K_SPLIT_HEADS:
		k_heads(k, 1);
		break;
	case HB_K_MERGE_HEADS:
		k_merge_heads(k);
		break;
	case HB_K_LSTM_CELL_FWD:
		k_lstm_fwd(k);
		break;
	case HB_K_LSTM_CELL_BWD:
		k_lstm_bwd(k);
		break;
	case HB_K_GATHER_ROWS:
		for (long r = 0; r < k->rows; r++)
			memcpy(k->y + r * k->cols, k->x + (long)k->idx[r] * k->cols, (size_t)k->cols * sizeof(float));
		break;
	case HB_K_SCATTER_ADD_ROWS:
		for (long r = 0; r < k->rows; r++) {
			float *dst = k->y + (long)k->idx[r] * k->cols;

			for (long j = 0; j < k->cols; j++)
				dst[j] += k->x[r * k->cols + j];
		}
		break;
	case HB_K_MSE_GRAD:
		for (long i = 0; i < k->n; i++)
			k->z[i] = k->a * (k->y[i] - k->x[i]);
		break;
	case HB_K_SGD_MOMENTUM:
		for (long i = 0; i < k->n; i++) {
			float g = k->x[i] + k->c * k->y[i];

			k->z[i] = k->b * k->z[i] + g;
			k->y[i] -= k->a * k->z[i];
		}
		break;
	case HB_K_ADAM: {
		float bc1 = 1.0f - powf(k->b, (float)k->step), bc2 = 1.0f - powf(k->c, (float)k->step);

		for (long i = 0; i < k->n; i++) {
			float g = k->x[i];

			k->y[i] *= 1.0f - k->a * k->e;  /* decoupled weight decay (AdamW), before the step */
			k->z[i] = k->b * k->z[i] + (1.0f - k->b) * g;
			k->w[i] = k->c * k->w[i] + (1.0f - k->c) * g * g;
			k->y[i] -= k->a * (k->z[i] / bc1) / (sqrtf(k->w[i] / bc2) + k->d);
		}
		break;
	}
	default:
		return hb_runtime_error(err, "cpu backend: unknown kernel %d", (int)k->op);
	}
	return 0;
}

const struct hb_device_ops hb_device_cpu = {
	.name = "cpu",
	.available = cpu_available,
	.open = cpu_open,
	.close = cpu_close,
	.info = cpu_info,
	.mem_alloc = cpu_mem_alloc,
	.mem_free = cpu_mem_free,
	.mem_info = cpu_mem_info,
	.stream_create = cpu_stream_create,
	.stream_destroy = cpu_stream_destroy,
	.stream_sync = cpu_sync,
	.device_sync = cpu_device_sync,
	.event_create = cpu_event_create,
	.event_destroy = cpu_event_destroy,
	.event_record = cpu_event_record,
	.event_elapsed = cpu_event_elapsed,
	.memcpy_h2d = cpu_memcpy,
	.memcpy_d2d = cpu_memcpy,
	.memcpy_d2h = cpu_memcpy,
	.gemm = cpu_gemm,
	.kernel = cpu_kernel,
};
