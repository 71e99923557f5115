/*
 * A real CUPTI trace, cross-checked with CUDA events (exits 77, a meson
 * skip, where cudaGetDeviceCount finds no device).
 *
 * Two virtual stream workers, each a host thread with its own stream, push
 * the forward phase's external id and enqueue memsets (VSW i: MEMSETS *
 * (i + 1), so their busy times differ and identify the streams); then the
 * main thread pushes the next phase's id and enqueues one device-to-device
 * memcpy.  Both streams are held behind a host function until everything is
 * enqueued, so their work starts together and runs back to back.  Checks:
 * each stream's CUPTI busy time against its own pair of events, and the
 * phase's union against the events' span (earliest start to latest end),
 * each within 10 %; the union lies between the larger busy time and their
 * sum; nothing dropped.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cupti.h"
#include "trace.h"

#define NVSW 2
#define MEMSETS 4
#define BYTES ((size_t)512 << 20)   /* per memset: ~0.1-0.3 ms on an H100 */
#define TOL 0.10

static int failures;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
			failures++;                                             \
		}                                                               \
	} while (0)

#define CUDA(call)                                                              \
	do {                                                                    \
		cudaError_t e_ = (call);                                        \
		if (e_ != cudaSuccess) {                                        \
			fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
				cudaGetErrorString(e_));                        \
			exit(1);                                                \
		}                                                               \
	} while (0)

struct vsw {
	int index;
	cudaStream_t stream;
	void *buf;
	cudaEvent_t start, end;
	int failed;
};

static atomic_int released;

/* Runs on a stream: hold it until the main thread has enqueued everything. */
static void CUDART_CB hold(void *arg)
{
	(void)arg;
	while (!atomic_load(&released))
		;
}

static void *vsw_main(void *arg)
{
	struct vsw *v = arg;
	int i;

	if (hb_cupti_push(hb_trace_ext_id(0, 1))) {
		v->failed = 1;
		return NULL;
	}
	CUDA(cudaEventRecord(v->start, v->stream));
	for (i = 0; i < MEMSETS * (v->index + 1); i++)
		CUDA(cudaMemsetAsync(v->buf, i + v->index, BYTES, v->stream));
	CUDA(cudaEventRecord(v->end, v->stream));
	if (hb_cupti_pop())
		v->failed = 1;
	return NULL;
}

static double elapsed(cudaEvent_t a, cudaEvent_t b)
{
	float ms = 0;

	CUDA(cudaEventElapsedTime(&ms, a, b));
	return ms * 1e-3;
}

int main(void)
{
	struct vsw v[NVSW];
	pthread_t th[NVSW];
	cudaEvent_t ref;
	void *dst;
	struct hb_error err = { 0 };
	struct hb_trace t;
	struct hb_trace_group *g = NULL;
	const struct hb_trace_group *fwd, *cp;
	int ndev = 0, n = 0, i;
	double span_lo = 1e30, span_hi = 0, busy_max = 0, busy_sum = 0;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("no CUDA device: skipped\n");
		return 77;
	}
	/* Before the context exists. */
	if (hb_cupti_init((size_t)8 << 20, &err)) {
		fprintf(stderr, "FAIL: hb_cupti_init: %s\n", err.msg);
		return 1;
	}
	CUDA(cudaSetDevice(0));
	CUDA(cudaEventCreate(&ref));
	CUDA(cudaMalloc(&dst, BYTES));
	for (i = 0; i < NVSW; i++) {
		v[i].index = i;
		v[i].failed = 0;
		CUDA(cudaStreamCreateWithFlags(&v[i].stream, cudaStreamNonBlocking));
		CUDA(cudaMalloc(&v[i].buf, BYTES));
		CUDA(cudaEventCreate(&v[i].start));
		CUDA(cudaEventCreate(&v[i].end));
		CUDA(cudaMemsetAsync(v[i].buf, 0, BYTES, v[i].stream));   /* warm-up, not measured */
	}
	CUDA(cudaDeviceSynchronize());
	hb_trace_init(&t);
	if (hb_cupti_flush(&err) || hb_cupti_take(&t, &err)) {
		fprintf(stderr, "FAIL: warm-up flush/take: %s\n", err.msg);
		return 1;
	}
	hb_trace_clear(&t);

	/* Hold both streams, enqueue from two threads, then release. */
	CUDA(cudaLaunchHostFunc(v[0].stream, hold, NULL));
	CUDA(cudaEventRecord(ref, v[0].stream));
	for (i = 1; i < NVSW; i++)
		CUDA(cudaStreamWaitEvent(v[i].stream, ref, 0));
	for (i = 0; i < NVSW; i++)
		if (pthread_create(&th[i], NULL, vsw_main, &v[i]))
			return 1;
	for (i = 0; i < NVSW; i++)
		pthread_join(th[i], NULL);
	CHECK(hb_cupti_push(hb_trace_ext_id(0, 4)) == 0, "push");
	CUDA(cudaMemcpyAsync(dst, v[0].buf, BYTES, cudaMemcpyDeviceToDevice, v[0].stream));
	CHECK(hb_cupti_pop() == 0, "pop");
	atomic_store(&released, 1);
	CUDA(cudaDeviceSynchronize());

	if (hb_cupti_flush(&err) || hb_cupti_take(&t, &err)) {
		fprintf(stderr, "FAIL: flush/take: %s\n", err.msg);
		return 1;
	}
	CHECK(t.dropped == 0, "%ld dropped", t.dropped);
	CHECK(t.untimed == 0, "%ld untimed", t.untimed);
	if (hb_trace_group(&t, &g, &n, &err)) {
		fprintf(stderr, "FAIL: hb_trace_group: %s\n", err.msg);
		return 1;
	}
	fwd = hb_trace_group_find(g, n, hb_trace_ext_id(0, 1));
	cp = hb_trace_group_find(g, n, hb_trace_ext_id(0, 4));
	CHECK(fwd != NULL, "no forward group (%d groups)", n);
	CHECK(cp != NULL, "no copy group (%d groups)", n);
	if (!fwd || !cp)
		return 1;
	CHECK(fwd->nrecs == MEMSETS * NVSW * (NVSW + 1) / 2, "forward: %ld records", fwd->nrecs);
	CHECK(fwd->nstreams == NVSW, "forward: %d streams", fwd->nstreams);
	CHECK(cp->nrecs == 1, "copy: %ld records", cp->nrecs);

	for (i = 0; i < NVSW; i++) {
		double lo = elapsed(ref, v[i].start), hi = elapsed(ref, v[i].end);

		if (lo < span_lo)
			span_lo = lo;
		if (hi > span_hi)
			span_hi = hi;
		printf("vsw %d: events %.6f s\n", i, hi - lo);
	}
	for (i = 0; i < fwd->nstreams; i++) {
		const struct hb_trace_busy *b = &fwd->streams[i];

		printf("CUPTI stream %u: busy %.6f s, %ld records\n", b->stream, b->busy_s, b->nrecs);
		if (b->busy_s > busy_max)
			busy_max = b->busy_s;
		busy_sum += b->busy_s;
	}
	/* Each VSW's event time should match one stream's CUPTI busy time (CUPTI
	 * numbers streams its own way). */
	for (i = 0; i < NVSW; i++) {
		double ev = elapsed(v[i].start, v[i].end);
		int s, match = 0;

		for (s = 0; s < fwd->nstreams; s++)
			if (fabs(fwd->streams[s].busy_s - ev) <= TOL * ev)
				match = 1;
		CHECK(match, "vsw %d: no stream's busy time within 10%% of its events' %.6f s", i, ev);
	}
	printf("forward: CUPTI union %.6f s, sum %.6f s; events span %.6f s\n", fwd->union_s, fwd->sum_s,
	       span_hi - span_lo);
	CHECK(fabs(fwd->union_s - (span_hi - span_lo)) <= TOL * (span_hi - span_lo),
	      "union %.6f s vs events span %.6f s", fwd->union_s, span_hi - span_lo);
	CHECK(fwd->union_s >= busy_max * (1 - 1e-9) && fwd->union_s <= busy_sum * (1 + 1e-9),
	      "union %.6f s outside [max busy %.6f, sum %.6f]", fwd->union_s, busy_max, busy_sum);
	CHECK(cp->union_s > 0, "copy union %.6f s", cp->union_s);
	for (i = 0; i < NVSW; i++)
		CHECK(!v[i].failed, "vsw %d: push/pop failed", i);

	hb_trace_group_free(g);
	hb_trace_free(&t);
	hb_cupti_shutdown();
	for (i = 0; i < NVSW; i++) {
		cudaFree(v[i].buf);
		cudaStreamDestroy(v[i].stream);
	}
	cudaFree(dst);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
