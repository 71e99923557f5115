/*
 * cublas_lazy.c: cuBLAS resolved with dlopen at first use (cublas_lazy.h
 * says why).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cublas_lazy.h"
#include "hb_config.h"  /* defines: HB_CUDA_LIBDIR */

#define STR2(x) #x
#define STR(x) STR2(x)  /* the expanded name: cublasCreate -> "cublasCreate_v2" */
#define SONAME "libcublas.so." STR(CUBLAS_VER_MAJOR)

/* Process-wide, like the library it stands for: filled once by load()
 * under pthread_once, read-only afterwards. */
static struct {
	pthread_once_t once;
	struct hb_cublas fn;
	int ok;
	char why[400];
} lazy = { .once = PTHREAD_ONCE_INIT };

/* Resolve one symbol into *slot; 0 when absent (why says which). */
static int resolve(void *h, const char *name, void **slot)
{
	*slot = dlsym(h, name);
	if (!*slot)
		snprintf(lazy.why, sizeof(lazy.why), "%s: no symbol %s", SONAME, name);
	return *slot != NULL;
}

static void load(void)
{
	/* The soname first (ld.so.conf, LD_LIBRARY_PATH), then the toolkit
	 * the build was configured against. */
	void *h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		char first[200];

		snprintf(first, sizeof(first), "%s", dlerror());
		h = dlopen(HB_CUDA_LIBDIR "/" SONAME, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			snprintf(lazy.why, sizeof(lazy.why), "cannot load cuBLAS: %s; %s", first, dlerror());
			return;
		}
	}
	/* POSIX: a void * from dlsym stored through a function pointer's
	 * object representation (as device_cpu.c does for OpenBLAS). */
	lazy.ok = resolve(h, STR(cublasCreate), (void **)&lazy.fn.create) &&
		  resolve(h, STR(cublasDestroy), (void **)&lazy.fn.destroy) &&
		  resolve(h, STR(cublasSetStream), (void **)&lazy.fn.set_stream) &&
		  resolve(h, STR(cublasSetMathMode), (void **)&lazy.fn.set_math_mode) &&
		  resolve(h, STR(cublasGetProperty), (void **)&lazy.fn.get_property) &&
		  resolve(h, STR(cublasGetStatusString), (void **)&lazy.fn.status_string) &&
		  resolve(h, STR(cublasSgemm), (void **)&lazy.fn.sgemm) &&
		  resolve(h, STR(cublasSgemmStridedBatched), (void **)&lazy.fn.sgemm_strided_batched);
}

const struct hb_cublas *hb_cublas(struct hb_error *err)
{
	pthread_once(&lazy.once, load);
	if (!lazy.ok) {
		hb_runtime_error(err, "cuda backend: %s", lazy.why);
		return NULL;
	}
	return &lazy.fn;
}
