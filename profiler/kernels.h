/*
 * kernels.h: the cuda backend's elementwise and small kernels (kernels.cu),
 * one C-callable launcher per enum hb_kernel_op of device.h.
 *
 * Each launcher enqueues its kernel on stream s and returns the launch's
 * status (cudaSuccess, or the error cudaGetLastError reports right after
 * the launch); errors while the kernel runs surface at the next
 * synchronisation.  Launchers with nothing to do (a zero count) launch
 * nothing and return cudaSuccess.  Arguments follow the meaning device.h
 * gives each op, under the names it uses there; pointers are device memory.
 * device_cuda.c maps struct hb_kernel's fields onto them.
 */
#ifndef HB_KERNELS_H
#define HB_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>  /* defines: cudaStream_t, cudaError_t */

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t hbk_fill(cudaStream_t s, float *y, long n, float a);
cudaError_t hbk_fill_hash(cudaStream_t s, float *y, long n, float a, uint64_t seed);
cudaError_t hbk_axpy(cudaStream_t s, float *y, const float *x, long n, float a);
cudaError_t hbk_scale(cudaStream_t s, float *y, long n, float a);
cudaError_t hbk_relu_fwd(cudaStream_t s, float *y, const float *x, long n);
cudaError_t hbk_relu_bwd(cudaStream_t s, float *dx, const float *dy, const float *y, long n);
cudaError_t hbk_resize_fwd(cudaStream_t s, float *y, const float *x, long rows, long cols_out, long cols_in);
cudaError_t hbk_resize_bwd(cudaStream_t s, float *dx, const float *dy, long rows, long cols_out, long cols_in);
cudaError_t hbk_im2col(cudaStream_t s, float *y, const float *x, long samples, long t, long c, long taps);
cudaError_t hbk_col2im(cudaStream_t s, float *dx, const float *dy, long samples, long t, long c, long taps);
cudaError_t hbk_softmax_fwd(cudaStream_t s, float *y, const float *x, long rows, long cols, float a);
cudaError_t hbk_softmax_bwd(cudaStream_t s, float *dx, const float *dy, const float *y, long rows, long cols,
			    float a);
/* q, k, v [S][h][t][dh] <-> packed [S][t][3][h][dh]: split when split != 0
 * (packed -> q, k, v), else its adjoint (q, k, v -> packed). */
cudaError_t hbk_split_heads(cudaStream_t s, int split, float *packed, float *q, float *k, float *v, long S,
			    long t, long h, long dh);
cudaError_t hbk_merge_heads(cudaStream_t s, float *y, const float *x, long S, long t, long h, long dh);
cudaError_t hbk_lstm_fwd(cudaStream_t s, float *gates, const float *c_prev, float *c, float *h, long rows,
			 long H, long ld);
cudaError_t hbk_lstm_bwd(cudaStream_t s, float *gates, const float *c_prev, const float *c, float *dc,
			 const float *dh, long rows, long H, long ld);
cudaError_t hbk_gather_rows(cudaStream_t s, float *y, const float *table, const int32_t *idx, long rows,
			    long cols);
cudaError_t hbk_scatter_add_rows(cudaStream_t s, float *dtable, const float *dy, const int32_t *idx, long rows,
				 long cols);
cudaError_t hbk_mse_grad(cudaStream_t s, float *dy, const float *y, const float *t, long n, float a);
cudaError_t hbk_sgd_momentum(cudaStream_t s, float *w, const float *g, float *m, long n, float lr, float mu,
			     float wd);
/* bc1 = 1 - b1^t and bc2 = 1 - b2^t, computed by the caller as the cpu
 * backend does (powf on the host), so both backends divide by the same. */
cudaError_t hbk_adam(cudaStream_t s, float *w, const float *g, float *m, float *v, long n, float lr, float b1,
		     float b2, float eps, float wd, float bc1, float bc2);

#ifdef __cplusplus
}
#endif

#endif
