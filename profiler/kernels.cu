/*
 * kernels.cu: the cuda backend's kernels, one per enum hb_kernel_op
 * (device.h), with C-callable launchers (kernels.h).
 *
 * What this is: plain, readable CUDA with exactly the meaning device.h
 * documents and device_cpu.c implements as the reference; the test
 * (tests/device_cuda) compares the two backends on the same inputs.  It is
 * not a tuned kernel library: elementwise ops are grid-stride loops over
 * the output, row ops (softmax) take one block per row, and only
 * SCATTER_ADD_ROWS uses atomics.
 *
 * Matching the cpu backend: nvcc compiles this file with --fmad=false (see
 * profiler/meson.build), so a * b + c rounds twice as it does in the cpu
 * backend's C, and division and sqrtf are IEEE-rounded (nvcc's default
 * without --use_fast_math).  What differs is expf/tanhf (a few ulp) and the
 * order of the softmax row sums and of SCATTER_ADD_ROWS' additions.
 *
 * Launching: every launcher goes through launch() below, which calls
 * cudaLaunchKernelEx (type-checked against the kernel's parameters) rather
 * than <<<>>>.  The host stubs nvcc generates for <<<>>> keep a guarded
 * function-local static, which needs the C++ runtime (__cxa_guard_*); this
 * file is compiled with -fno-threadsafe-statics -fno-exceptions so it links
 * with the C linker and no libstdc++, and that is only safe because the
 * stubs are never called.
 */
#include <math.h>
#include <stdint.h>
#include <utility>             /* defines: std::forward */

#include <cuda_runtime.h>      /* defines: cudaLaunchKernelEx, dim3 */

#include "kernels.h"           /* defines: hbk_* launchers */

#define BLOCK 256              /* threads per block, every kernel */
#define MAX_GRID 32768         /* blocks per launch; grid-stride loops cover the rest */

/* ------------------------------------------------------------------------ */
/* Launch helpers                                                           */

static unsigned grid_for(long n)
{
	long blocks = (n + BLOCK - 1) / BLOCK;

	return (unsigned)(blocks < 1 ? 1 : blocks > MAX_GRID ? MAX_GRID : blocks);
}

/* Enqueue kern<<<grid, BLOCK, 0, s>>>(args...); the launch status, or the
 * error cudaGetLastError reports after it (which also clears it). */
template <typename... Exp, typename... Act>
static cudaError_t launch(cudaStream_t s, unsigned grid, void (*kern)(Exp...), Act &&...args)
{
	cudaLaunchConfig_t cfg = {};
	cudaError_t rc, last;

	cfg.gridDim = dim3(grid);
	cfg.blockDim = dim3(BLOCK);
	cfg.dynamicSmemBytes = 0;
	cfg.stream = s;
	cfg.attrs = NULL;
	cfg.numAttrs = 0;
	rc = cudaLaunchKernelEx(&cfg, kern, std::forward<Act>(args)...);
	last = cudaGetLastError();
	return rc != cudaSuccess ? rc : last;
}

/* for (i = 0; i < n; i++) spread over the whole grid */
#define GRID_STRIDE(i, n) \
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long)gridDim.x * blockDim.x)

/* ------------------------------------------------------------------------ */
/* Device helpers                                                           */

/* hb_hash_unit of device.h, the same integer arithmetic (splitmix64 of
 * seed + golden * (i + 1)); keep the two identical, the test compares
 * FILL_HASH bit for bit. */
static __device__ float hash_unit(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (float)(z >> 40) * (1.0f / 16777216.0f);
}

static __device__ long imod(long a, long m)
{
	long r = a % m;

	return r < 0 ? r + m : r;
}

static __device__ float sigmoidf(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

static __device__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

static __device__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

/* Sum (or max) of v over the block, returned to every thread.  red holds
 * one value per warp; the leading barrier lets a block call these back to
 * back without overwriting what another warp is still reading. */
static __device__ float block_sum(float v, float *red)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;

	v = warp_sum(v);
	__syncthreads();
	if (lane == 0)
		red[warp] = v;
	__syncthreads();
	return warp_sum(lane < nwarps ? red[lane] : 0.0f);
}

static __device__ float block_max(float v, float *red)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;

	v = warp_max(v);
	__syncthreads();
	if (lane == 0)
		red[warp] = v;
	__syncthreads();
	return warp_max(lane < nwarps ? red[lane] : -INFINITY);
}

/* ------------------------------------------------------------------------ */
/* Elementwise                                                              */

static __global__ void k_fill(float *y, long n, float a)
{
	GRID_STRIDE(i, n)
		y[i] = a;
}

static __global__ void k_fill_hash(float *y, long n, float a, uint64_t seed)
{
	GRID_STRIDE(i, n)
		y[i] = a * (hash_unit(seed, (uint64_t)i) - 0.5f);
}

static __global__ void k_axpy(float *y, const float *x, long n, float a)
{
	GRID_STRIDE(i, n)
		y[i] += a * x[i];
}

static __global__ void k_scale(float *y, long n, float a)
{
	GRID_STRIDE(i, n)
		y[i] *= a;
}

static __global__ void k_relu_fwd(float *y, const float *x, long n)
{
	GRID_STRIDE(i, n)
		y[i] = x[i] > 0 ? x[i] : 0.0f;
}

static __global__ void k_relu_bwd(float *dx, const float *dy, const float *y, long n)
{
	GRID_STRIDE(i, n)
		dx[i] = y[i] > 0 ? dy[i] : 0.0f;
}

static __global__ void k_mse_grad(float *dy, const float *y, const float *t, long n, float a)
{
	GRID_STRIDE(i, n)
		dy[i] = a * (y[i] - t[i]);
}

static __global__ void k_sgd_momentum(float *w, const float *g, float *m, long n, float lr, float mu, float wd)
{
	GRID_STRIDE(i, n) {
		float gi = g[i] + wd * w[i];

		m[i] = mu * m[i] + gi;
		w[i] -= lr * m[i];
	}
}

static __global__ void k_adam(float *w, const float *g, float *m, float *v, long n, float lr, float b1, float b2,
			      float eps, float wd, float bc1, float bc2)
{
	GRID_STRIDE(i, n) {
		float gi = g[i];

		w[i] *= 1.0f - lr * wd;  /* decoupled weight decay (AdamW), before the step */
		m[i] = b1 * m[i] + (1.0f - b1) * gi;
		v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
		w[i] -= lr * (m[i] / bc1) / (sqrtf(v[i] / bc2) + eps);
	}
}

/* ------------------------------------------------------------------------ */
/* Reshaping gathers and their adjoints                                     */

/* y[r][i] = x[r][i mod cols_in], i < cols_out */
static __global__ void k_resize_fwd(float *y, const float *x, long rows, long cols_out, long cols_in)
{
	GRID_STRIDE(i, rows * cols_out) {
		long r = i / cols_out, j = i % cols_out;

		y[i] = x[r * cols_in + j % cols_in];
	}
}

/* dx[r][j] = sum of dy[r][i] over i < cols_out, i mod cols_in = j (in i order) */
static __global__ void k_resize_bwd(float *dx, const float *dy, long rows, long cols_out, long cols_in)
{
	GRID_STRIDE(o, rows * cols_in) {
		long r = o / cols_in, j = o % cols_in;
		float sum = 0;

		for (long i = j; i < cols_out; i += cols_in)
			sum += dy[r * cols_out + i];
		dx[o] = sum;
	}
}

/* y[s][p][tap][ch] = x[s][(p + tap - taps/2) mod t][ch] */
static __global__ void k_im2col(float *y, const float *x, long S, long t, long c, long taps)
{
	GRID_STRIDE(i, S * t * taps * c) {
		long ch = i % c, rest = i / c;
		long tap = rest % taps;
		long p = (rest / taps) % t, s = rest / taps / t;

		y[i] = x[(s * t + imod(p + tap - taps / 2, t)) * c + ch];
	}
}

/* dx[s][q][ch] = sum over taps, in tap order, of dy[s][(q - (tap - taps/2)) mod t][tap][ch] */
static __global__ void k_col2im(float *dx, const float *dy, long S, long t, long c, long taps)
{
	GRID_STRIDE(i, S * t * c) {
		long ch = i % c, q = (i / c) % t, s = i / c / t;
		float sum = 0;

		for (long tap = 0; tap < taps; tap++)
			sum += dy[((s * t + imod(q - (tap - taps / 2), t)) * taps + tap) * c + ch];
		dx[i] = sum;
	}
}

/* Indexed by the packed [S][t][3][h][dh] element; which picks q, k or v. */
static __global__ void k_split_heads(int split, float *packed, float *q, float *k, float *v, long S, long t,
				     long h, long dh)
{
	GRID_STRIDE(i, S * t * 3 * h * dh) {
		long e = i % dh, rest = i / dh;
		long hh = rest % h;
		long which = (rest / h) % 3;
		long p = (rest / h / 3) % t, s = rest / h / 3 / t;
		float *buf = which == 0 ? q : which == 1 ? k : v;
		long headed = ((s * h + hh) * t + p) * dh + e;

		if (split)
			buf[headed] = packed[i];
		else
			packed[i] = buf[headed];
	}
}

/* y[S][t][h][dh] = x[S][h][t][dh] */
static __global__ void k_merge_heads(float *y, const float *x, long S, long t, long h, long dh)
{
	GRID_STRIDE(i, S * t * h * dh) {
		long e = i % dh, rest = i / dh;
		long hh = rest % h, p = (rest / h) % t, s = rest / h / t;

		y[i] = x[((s * h + hh) * t + p) * dh + e];
	}
}

static __global__ void k_gather_rows(float *y, const float *table, const int32_t *idx, long rows, long cols)
{
	GRID_STRIDE(i, rows * cols)
		y[i] = table[(long)idx[i / cols] * cols + i % cols];
}

static __global__ void k_scatter_add_rows(float *dtable, const float *dy, const int32_t *idx, long rows, long cols)
{
	GRID_STRIDE(i, rows * cols)
		atomicAdd(&dtable[(long)idx[i / cols] * cols + i % cols], dy[i]);
}

/* ------------------------------------------------------------------------ */
/* Rows: softmax, one block per row                                         */

static __global__ void k_softmax_fwd(float *y, const float *x, long rows, long cols, float a)
{
	__shared__ float red[BLOCK / 32];

	for (long r = blockIdx.x; r < rows; r += gridDim.x) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		float mx = -INFINITY, sum = 0;

		for (long j = threadIdx.x; j < cols; j += blockDim.x)
			mx = fmaxf(mx, a * xr[j]);
		mx = block_max(mx, red);
		for (long j = threadIdx.x; j < cols; j += blockDim.x) {
			yr[j] = expf(a * xr[j] - mx);
			sum += yr[j];
		}
		sum = block_sum(sum, red);
		for (long j = threadIdx.x; j < cols; j += blockDim.x)
			yr[j] /= sum;
	}
}

/* dx = a * y * (dy - sum_j dy_j y_j) */
static __global__ void k_softmax_bwd(float *dx, const float *dy, const float *y, long rows, long cols, float a)
{
	__shared__ float red[BLOCK / 32];

	for (long r = blockIdx.x; r < rows; r += gridDim.x) {
		const float *dyr = dy + r * cols, *yr = y + r * cols;
		float *dxr = dx + r * cols;
		float dot = 0;

		for (long j = threadIdx.x; j < cols; j += blockDim.x)
			dot += dyr[j] * yr[j];
		dot = block_sum(dot, red);
		for (long j = threadIdx.x; j < cols; j += blockDim.x)
			dxr[j] = a * yr[j] * (dyr[j] - dot);
	}
}

/* ------------------------------------------------------------------------ */
/* LSTM cell: one thread per (sample, hidden unit)                          */

static __global__ void k_lstm_fwd(float *gates, const float *c_prev, float *c, float *h, long rows, long H,
				  long ld)
{
	GRID_STRIDE(o, rows * H) {
		long r = o / H, j = o % H;
		float *g = gates + r * 4 * H;
		float i = sigmoidf(g[j]), f = sigmoidf(g[H + j]), gg = tanhf(g[2 * H + j]), og = sigmoidf(g[3 * H + j]);
		float cv;

		g[j] = i;
		g[H + j] = f;
		g[2 * H + j] = gg;
		g[3 * H + j] = og;
		cv = f * (c_prev ? c_prev[o] : 0.0f) + i * gg;
		c[o] = cv;
		h[r * ld + j] = og * tanhf(cv);
	}
}

static __global__ void k_lstm_bwd(float *gates, const float *c_prev, const float *c, float *dc, const float *dh,
				  long rows, long H, long ld)
{
	GRID_STRIDE(o, rows * H) {
		long r = o / H, j = o % H;
		float *g = gates + r * 4 * H;
		float i = g[j], f = g[H + j], gg = g[2 * H + j], og = g[3 * H + j];
		float dhv = dh[r * ld + j];
		float tc = tanhf(c[o]);
		float dct = dc[o] + dhv * og * (1.0f - tc * tc);

		g[j] = dct * gg * i * (1.0f - i);
		g[H + j] = dct * (c_prev ? c_prev[o] : 0.0f) * f * (1.0f - f);
		g[2 * H + j] = dct * i * (1.0f - gg * gg);
		g[3 * H + j] = dhv * tc * og * (1.0f - og);
		dc[o] = dct * f;
	}
}

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */

extern "C" {

cudaError_t hbk_fill(cudaStream_t s, float *y, long n, float a)
{
	return n > 0 ? launch(s, grid_for(n), k_fill, y, n, a) : cudaSuccess;
}

cudaError_t hbk_fill_hash(cudaStream_t s, float *y, long n, float a, uint64_t seed)
{
	return n > 0 ? launch(s, grid_for(n), k_fill_hash, y, n, a, seed) : cudaSuccess;
}

cudaError_t hbk_axpy(cudaStream_t s, float *y, const float *x, long n, float a)
{
	return n > 0 ? launch(s, grid_for(n), k_axpy, y, x, n, a) : cudaSuccess;
}

cudaError_t hbk_scale(cudaStream_t s, float *y, long n, float a)
{
	return n > 0 ? launch(s, grid_for(n), k_scale, y, n, a) : cudaSuccess;
}

cudaError_t hbk_relu_fwd(cudaStream_t s, float *y, const float *x, long n)
{
	return n > 0 ? launch(s, grid_for(n), k_relu_fwd, y, x, n) : cudaSuccess;
}

cudaError_t hbk_relu_bwd(cudaStream_t s, float *dx, const float *dy, const float *y, long n)
{
	return n > 0 ? launch(s, grid_for(n), k_relu_bwd, dx, dy, y, n) : cudaSuccess;
}

cudaError_t hbk_resize_fwd(cudaStream_t s, float *y, const float *x, long rows, long cols_out, long cols_in)
{
	long n = rows * cols_out;

	return n > 0 && cols_in > 0 ? launch(s, grid_for(n), k_resize_fwd, y, x, rows, cols_out, cols_in)
				    : cudaSuccess;
}

cudaError_t hbk_resize_bwd(cudaStream_t s, float *dx, const float *dy, long rows, long cols_out, long cols_in)
{
	long n = rows * cols_in;

	return n > 0 ? launch(s, grid_for(n), k_resize_bwd, dx, dy, rows, cols_out, cols_in) : cudaSuccess;
}

cudaError_t hbk_im2col(cudaStream_t s, float *y, const float *x, long samples, long t, long c, long taps)
{
	long n = samples * t * taps * c;

	return n > 0 ? launch(s, grid_for(n), k_im2col, y, x, samples, t, c, taps) : cudaSuccess;
}

cudaError_t hbk_col2im(cudaStream_t s, float *dx, const float *dy, long samples, long t, long c, long taps)
{
	long n = samples * t * c;

	return n > 0 ? launch(s, grid_for(n), k_col2im, dx, dy, samples, t, c, taps) : cudaSuccess;
}

cudaError_t hbk_softmax_fwd(cudaStream_t s, float *y, const float *x, long rows, long cols, float a)
{
	if (rows <= 0 || cols <= 0)
		return cudaSuccess;
	return launch(s, (unsigned)(rows < MAX_GRID ? rows : MAX_GRID), k_softmax_fwd, y, x, rows, cols, a);
}

cudaError_t hbk_softmax_bwd(cudaStream_t s, float *dx, const float *dy, const float *y, long rows, long cols,
			    float a)
{
	if (rows <= 0 || cols <= 0)
		return cudaSuccess;
	return launch(s, (unsigned)(rows < MAX_GRID ? rows : MAX_GRID), k_softmax_bwd, dx, dy, y, rows, cols, a);
}

cudaError_t hbk_split_heads(cudaStream_t s, int split, float *packed, float *q, float *k, float *v, long S,
			    long t, long h, long dh)
{
	long n = S * t * 3 * h * dh;

	return n > 0 ? launch(s, grid_for(n), k_split_heads, split, packed, q, k, v, S, t, h, dh) : cudaSuccess;
}

cudaError_t hbk_merge_heads(cudaStream_t s, float *y, const float *x, long S, long t, long h, long dh)
{
	long n = S * t * h * dh;

	return n > 0 ? launch(s, grid_for(n), k_merge_heads, y, x, S, t, h, dh) : cudaSuccess;
}

cudaError_t hbk_lstm_fwd(cudaStream_t s, float *gates, const float *c_prev, float *c, float *h, long rows,
			 long H, long ld)
{
	long n = rows * H;

	return n > 0 ? launch(s, grid_for(n), k_lstm_fwd, gates, c_prev, c, h, rows, H, ld) : cudaSuccess;
}

cudaError_t hbk_lstm_bwd(cudaStream_t s, float *gates, const float *c_prev, const float *c, float *dc,
			 const float *dh, long rows, long H, long ld)
{
	long n = rows * H;

	return n > 0 ? launch(s, grid_for(n), k_lstm_bwd, gates, c_prev, c, dc, dh, rows, H, ld) : cudaSuccess;
}

cudaError_t hbk_gather_rows(cudaStream_t s, float *y, const float *table, const int32_t *idx, long rows,
			    long cols)
{
	long n = rows * cols;

	return n > 0 ? launch(s, grid_for(n), k_gather_rows, y, table, idx, rows, cols) : cudaSuccess;
}

cudaError_t hbk_scatter_add_rows(cudaStream_t s, float *dtable, const float *dy, const int32_t *idx, long rows,
				 long cols)
{
	long n = rows * cols;

	return n > 0 ? launch(s, grid_for(n), k_scatter_add_rows, dtable, dy, idx, rows, cols) : cudaSuccess;
}

cudaError_t hbk_mse_grad(cudaStream_t s, float *dy, const float *y, const float *t, long n, float a)
{
	return n > 0 ? launch(s, grid_for(n), k_mse_grad, dy, y, t, n, a) : cudaSuccess;
}

cudaError_t hbk_sgd_momentum(cudaStream_t s, float *w, const float *g, float *m, long n, float lr, float mu,
			     float wd)
{
	return n > 0 ? launch(s, grid_for(n), k_sgd_momentum, w, g, m, n, lr, mu, wd) : cudaSuccess;
}

cudaError_t hbk_adam(cudaStream_t s, float *w, const float *g, float *m, float *v, long n, float lr, float b1,
		     float b2, float eps, float wd, float bc1, float bc2)
{
	return n > 0 ? launch(s, grid_for(n), k_adam, w, g, m, v, n, lr, b1, b2, eps, wd, bc1, bc2) : cudaSuccess;
}

} /* extern "C" */
