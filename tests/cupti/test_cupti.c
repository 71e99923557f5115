/* Unit tests for the CUPTI tracer's buffer parsing (cupti.c), on activity
 * buffers built by hand from CUPTI's own record structs, then attributed
 * with hb_trace_group: no GPU needed.  Plus the tracer's refusal to start
 * where CUPTI cannot trace (run only when no CUDA device is visible). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* CUPTI's headers by name: profiler/cupti.h shadows <cupti.h>. */
#include <cuda_runtime_api.h>
#include <cupti_activity.h>

#include "cupti.h"
#include "trace.h"

/* A buffer as CUPTI hands it back: records back to back, 8-byte aligned. */
struct actbuf {
	uint64_t words[4096];   /* 32 KiB, aligned for ACTIVITY_RECORD_ALIGNMENT */
	size_t len;             /* valid bytes */
};

static void put(struct actbuf *b, const void *rec, size_t size)
{
	assert_true(b->len + size <= sizeof(b->words));
	assert_int_equal(size % ACTIVITY_RECORD_ALIGNMENT, 0);
	memcpy((uint8_t *)b->words + b->len, rec, size);
	b->len += size;
}

static void put_kernel(struct actbuf *b, uint64_t start, uint64_t end, uint32_t stream, uint32_t corr)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = start;
	k.end = end;
	k.completed = end;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = stream;
	k.correlationId = corr;
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 256;
	k.blockY = k.blockZ = 1;
	k.name = "hb_fake_kernel";
	put(b, &k, sizeof(k));
}

static void put_memcpy(struct actbuf *b, uint64_t start, uint64_t end, uint32_t stream, uint32_t corr)
{
	CUpti_ActivityMemcpy6 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.bytes = 1 << 20;
	m.start = start;
	m.end = end;
	m.contextId = 1;
	m.streamId = stream;
	m.correlationId = corr;
	m.copyCount = 1;
	put(b, &m, sizeof(m));
}

static void put_memset(struct actbuf *b, uint64_t start, uint64_t end, uint32_t stream, uint32_t corr)
{
	CUpti_ActivityMemset4 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.bytes = 4096;
	m.start = start;
	m.end = end;
	m.contextId = 1;
	m.streamId = stream;
	m.correlationId = corr;
	put(b, &m, sizeof(m));
}

static void put_ext(struct actbuf *b, CUpti_ExternalCorrelationKind kind, uint64_t ext, uint32_t corr)
{
	CUpti_ActivityExternalCorrelation e;

	memset(&e, 0, sizeof(e));
	e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	e.externalKind = kind;
	e.externalId = ext;
	e.correlationId = corr;
	put(b, &e, sizeof(e));
}

#define T0 1732000000000000000ull   /* a CUPTI-like timestamp, ns */
#define NS 1e-9

/*
 * Iteration 3 of two VSWs on CUPTI streams 13 and 14.  Forward: kernels
 * on both streams overlap (stream 13: [0,400) and [500,800); stream 14:
 * [100,600)): union 800 ns, busy 700 and 500.  Backward: one kernel per
 * stream, overlapping ([900,1200), [1000,1100)): union 300 ns.  Data: a
 * memcpy on stream 13 at [-200,-50).  As CUPTI writes them, each activity's
 * external-correlation record comes first.
 */
static void build_iteration(struct actbuf *b)
{
	const uint64_t data = hb_trace_ext_id(3, 0), fwd = hb_trace_ext_id(3, 1), bwd = hb_trace_ext_id(3, 2);
	const uint64_t t = T0 + 1000;

	put_ext(b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, data, 10);
	put_memcpy(b, t - 200, t - 50, 13, 10);
	put_ext(b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, fwd, 11);
	put_kernel(b, t + 0, t + 400, 13, 11);
	put_ext(b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, fwd, 12);
	put_kernel(b, t + 100, t + 600, 14, 12);
	put_ext(b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, fwd, 13);
	put_kernel(b, t + 500, t + 800, 13, 13);
	put_ext(b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, bwd, 14);
	put_kernel(b, t + 900, t + 1200, 13, 14);
	put_ext(b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, bwd, 15);
	put_kernel(b, t + 1000, t + 1100, 14, 15);
}

static void test_parse_and_attribute(void **state)
{
	static struct actbuf b;
	struct hb_trace t;
	struct hb_trace_group *g = NULL;
	const struct hb_trace_group *data, *fwd, *bwd;
	const struct hb_trace_busy *s13, *s14;
	struct hb_error err = { 0 };
	int n = 0;

	(void)state;
	memset(&b, 0, sizeof(b));
	build_iteration(&b);
	hb_trace_init(&t);
	assert_int_equal(hb_cupti_parse_buffer((const uint8_t *)b.words, b.len, &t, &err), 0);
	assert_int_equal(t.nrecs, 6);
	assert_int_equal(t.ncorrs, 6);
	assert_int_equal(t.recs[0].kind, HB_TRACE_MEMCPY);
	assert_int_equal(t.recs[1].kind, HB_TRACE_KERNEL);
	assert_true(t.recs[1].start_ns == T0 + 1000 && t.recs[1].end_ns == T0 + 1400);
	assert_int_equal(t.recs[1].stream, 13);
	assert_int_equal(t.recs[1].corr, 11);
	assert_true(t.corrs[1].corr == 11 && t.corrs[1].ext_id == hb_trace_ext_id(3, 1));
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.untimed, 0);

	assert_int_equal(hb_trace_group(&t, &g, &n, &err), 0);
	assert_int_equal(n, 3);
	data = hb_trace_group_find(g, n, hb_trace_ext_id(3, 0));
	fwd = hb_trace_group_find(g, n, hb_trace_ext_id(3, 1));
	bwd = hb_trace_group_find(g, n, hb_trace_ext_id(3, 2));
	assert_non_null(data);
	assert_non_null(fwd);
	assert_non_null(bwd);

	assert_true(fabs(data->union_s - 150 * NS) < 1e-18);
	assert_int_equal(data->nstreams, 1);

	assert_int_equal(fwd->nrecs, 3);
	assert_true(fabs(fwd->union_s - 800 * NS) < 1e-18);
	assert_true(fabs(fwd->sum_s - 1200 * NS) < 1e-18);
	assert_int_equal(fwd->nstreams, 2);
	s13 = hb_trace_group_stream(fwd, 13);
	s14 = hb_trace_group_stream(fwd, 14);
	assert_true(fabs(s13->busy_s - 700 * NS) < 1e-18);
	assert_true(fabs(s14->busy_s - 500 * NS) < 1e-18);
	assert_true(fwd->union_s < s13->busy_s + s14->busy_s);
	assert_true(fwd->first_start_ns == T0 + 1000 && fwd->last_end_ns == T0 + 1800);

	assert_true(fabs(bwd->union_s - 300 * NS) < 1e-18);
	assert_true(fabs(hb_trace_group_stream(bwd, 13)->busy_s - 300 * NS) < 1e-18);
	assert_true(fabs(hb_trace_group_stream(bwd, 14)->busy_s - 100 * NS) < 1e-18);
	assert_null(hb_trace_group_find(g, n, HB_TRACE_NO_EXT));
	hb_trace_group_free(g);
	hb_trace_free(&t);
}

/* Kinds not traced and other external-correlation kinds are skipped;
 * records without timestamps are counted, not stored; work with no
 * CUSTOM0 pair is unattributed; two buffers append. */
static void test_parse_skips_and_counts(void **state)
{
	static struct actbuf b, b2;
	CUpti_ActivityAPI api;
	struct hb_trace t;
	struct hb_trace_group *g = NULL;
	struct hb_error err = { 0 };
	int n = 0;

	(void)state;
	memset(&b, 0, sizeof(b));
	memset(&b2, 0, sizeof(b2));
	memset(&api, 0, sizeof(api));
	api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	api.start = T0;
	api.end = T0 + 5;
	api.correlationId = 20;
	put(&b, &api, sizeof(api));
	put_ext(&b, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 555, 20);
	put_kernel(&b, T0 + 10, T0 + 30, 7, 20);
	put_kernel(&b, 0, 0, 7, 21);                 /* no timestamps */
	put_ext(&b2, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 8, 22);
	put_memset(&b2, T0 + 40, T0 + 45, 8, 22);

	hb_trace_init(&t);
	assert_int_equal(hb_cupti_parse_buffer((const uint8_t *)b.words, b.len, &t, &err), 0);
	assert_int_equal(hb_cupti_parse_buffer((const uint8_t *)b2.words, b2.len, &t, &err), 0);
	assert_int_equal(hb_cupti_parse_buffer(NULL, 0, &t, &err), 0);
	assert_int_equal(t.nrecs, 2);
	assert_int_equal(t.ncorrs, 1);
	assert_int_equal(t.untimed, 1);
	assert_int_equal(t.recs[1].kind, HB_TRACE_MEMSET);

	assert_int_equal(hb_trace_group(&t, &g, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_true(g[0].ext_id == 8);
	assert_true(fabs(g[0].union_s - 5 * NS) < 1e-18);
	assert_true(g[1].ext_id == HB_TRACE_NO_EXT);
	assert_true(fabs(g[1].union_s - 20 * NS) < 1e-18);
	hb_trace_group_free(g);
	hb_trace_free(&t);
}

/* A record CUPTI cannot walk stops the parse with an input error naming
 * it; the records before it are kept. */
static void test_parse_rejects_bad_record(void **state)
{
	static struct actbuf b;
	CUpti_ActivityExternalCorrelation bogus;
	struct hb_trace t;
	struct hb_error err = { 0 };

	(void)state;
	memset(&b, 0, sizeof(b));
	put_kernel(&b, T0, T0 + 10, 1, 1);
	memset(&bogus, 0, sizeof(bogus));
	bogus.kind = (CUpti_ActivityKind)200;
	put(&b, &bogus, sizeof(bogus));
	hb_trace_init(&t);
	assert_int_equal(hb_cupti_parse_buffer((const uint8_t *)b.words, b.len, &t, &err), -1);
	assert_int_equal(err.code, HB_EINPUT);
	assert_non_null(strstr(err.msg, "record 1"));
	assert_non_null(strstr(err.msg, "CUPTI_ERROR_INVALID_KIND"));
	assert_int_equal(t.nrecs, 1);

	/* The same record first. */
	hb_error_clear(&err);
	hb_trace_clear(&t);
	assert_int_equal(hb_cupti_parse_buffer((const uint8_t *)b.words + sizeof(CUpti_ActivityKernel10),
					       sizeof(bogus), &t, &err), -1);
	assert_non_null(strstr(err.msg, "record 0 (kind 200 at offset 0)"));
	assert_int_equal(t.nrecs, 0);
	hb_trace_free(&t);
}

/* Where CUDA finds no device, CUPTI cannot trace: init fails cleanly and
 * names the call, and the rest of the API stays safe to call. */
static void test_init_without_gpu(void **state)
{
	struct hb_error err = { 0 };
	struct hb_trace t;
	int ndev = 0;

	(void)state;
	if (cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0)
		skip(); /* test_cupti_gpu covers the real tracer */
	assert_int_equal(hb_cupti_init(1 << 20, &err), -1);
	assert_int_equal(err.code, HB_ERUNTIME);
	assert_non_null(strstr(err.msg, "CUPTI: cuptiActivitySetAttribute(DEVICE_BUFFER_SIZE)"));
	assert_non_null(strstr(err.msg, "(999)"));
	assert_non_null(strstr(err.msg, "no GPU"));
	hb_error_clear(&err);
	assert_int_equal(hb_cupti_init(0, &err), -1);
	assert_non_null(strstr(err.msg, "cuptiActivityEnable("));
	assert_int_equal(hb_cupti_push(5), -1);
	assert_int_equal(hb_cupti_pop(), -1);
	hb_trace_init(&t);
	assert_int_equal(hb_cupti_take(&t, &err), 0);
	assert_int_equal(t.nrecs, 0);
	hb_cupti_shutdown();
	hb_cupti_shutdown();
	hb_trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_and_attribute),
		cmocka_unit_test(test_parse_skips_and_counts),
		cmocka_unit_test(test_parse_rejects_bad_record),
		cmocka_unit_test(test_init_without_gpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
