/*
 * cublas_lazy.h: cuBLAS loaded at its first use (dlopen), not linked
 * (GPU builds only: cublas_lazy.c is compiled when HB_HAVE_GPU is 1).
 *
 * Why: linked, libcublas and the libcublasLt it pulls in cost every
 * hetbatch process about 150 MB of resident memory before main() runs
 * (the dynamic loader touches their relocated data), although only the
 * cuda device backend calls them.  A whole-trace `sim` paid it on top of
 * its own data (`hetbatch --help` alone peaked at 225 MB).  Loaded here on
 * demand, the cost falls on `profile --backend cuda` and `live --backend
 * cuda` only.
 *
 * The table holds exactly the entry points device_cuda.c uses, typed from
 * cuBLAS's own declarations (__typeof__, so a changed prototype is a
 * compile error), and resolved by their real symbol names (cublas_v2.h
 * maps e.g. cublasCreate to cublasCreate_v2; the stringified macro gives
 * that name).
 *
 * hb_cublas() loads the library once per process (pthread_once; the handle
 * is never closed, as a linked library would never be unloaded) and
 * returns the table, or NULL with err naming the library and dlerror()'s
 * reason.  Safe to call from any thread.
 */
#ifndef HB_CUBLAS_LAZY_H
#define HB_CUBLAS_LAZY_H

#include <cublas_v2.h> /* defines: the prototypes the table takes its types from */

#include "error.h"     /* defines: struct hb_error */

struct hb_cublas {
	__typeof__(cublasCreate) *create;
	__typeof__(cublasDestroy) *destroy;
	__typeof__(cublasSetStream) *set_stream;
	__typeof__(cublasSetMathMode) *set_math_mode;
	__typeof__(cublasGetProperty) *get_property;
	__typeof__(cublasGetStatusString) *status_string;
	__typeof__(cublasSgemm) *sgemm;
	__typeof__(cublasSgemmStridedBatched) *sgemm_strided_batched;
};

const struct hb_cublas *hb_cublas(struct hb_error *err);

#endif
