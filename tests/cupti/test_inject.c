/* The CUPTI injection library (profiler/inject.c, libhetbatch_inject.so)
 * without a GPU: the library is dlopen'ed as the CUDA driver would load it;
 *   - InitializeInjection with HETBATCH_TRACE_OUT unset, and where CUPTI
 *     cannot trace (no GPU: every cuptiActivityEnable answers 999), still
 *     returns 1 (the traced process runs on) and hb_inject_finish reports
 *     that nothing was traced (-1);
 *   - activity buffers built by hand from CUPTI's own record structs (NVTX
 *     markers, API calls, kernels, a memcpy) go through the library's record
 *     handling and writer (test hooks), and the file it writes is read back
 *     by ktrace.c and attributed.
 * What only a GPU shows (that CUPTI delivers these records from a real
 * PyTorch process) is scripts/gpu/issue12.sh's. */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <cupti_activity.h>

#include "ktrace.h"

typedef int (*init_fn)(void);
typedef int (*finish_fn)(void);
typedef void (*feed_fn)(uint8_t *, size_t);
typedef int (*write_fn)(const char *);

static void *lib;

static void *sym(const char *name)
{
	void *p = dlsym(lib, name);

	if (!p)
		fail_msg("libhetbatch_inject.so does not export %s", name);
	return p;
}

struct actbuf {
	uint64_t words[8192];
	size_t len;
};

static void put(struct actbuf *b, const void *rec, size_t size)
{
	assert_true(b->len + size <= sizeof(b->words));
	assert_int_equal(size % ACTIVITY_RECORD_ALIGNMENT, 0);
	memcpy((uint8_t *)b->words + b->len, rec, size);
	b->len += size;
}

static void put_marker(struct actbuf *b, int start, uint32_t id, uint32_t tid, uint64_t ts, const char *name)
{
	CUpti_ActivityMarker2 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = start ? CUPTI_ACTIVITY_FLAG_MARKER_START : CUPTI_ACTIVITY_FLAG_MARKER_END;
	m.timestamp = ts;
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = 42;
	m.objectId.pt.threadId = tid;
	m.name = start ? name : NULL;
	put(b, &m, sizeof(m));
}

static void put_api(struct actbuf *b, CUpti_ActivityKind kind, uint32_t corr, uint32_t tid, uint64_t s, uint64_t e)
{
	CUpti_ActivityAPI a;

	memset(&a, 0, sizeof(a));
	a.kind = kind;
	a.cbid = 1;
	a.start = s;
	a.end = e;
	a.processId = 42;
	a.threadId = tid;
	a.correlationId = corr;
	put(b, &a, sizeof(a));
}

static void put_kernel(struct actbuf *b, uint64_t s, uint64_t e, uint32_t stream, uint32_t corr)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = s;
	k.end = e;
	k.completed = e;
	k.contextId = 1;
	k.streamId = stream;
	k.correlationId = corr;
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 128;
	k.blockY = k.blockZ = 1;
	k.name = "hb_fake_kernel";
	put(b, &k, sizeof(k));
}

static void put_memcpy(struct actbuf *b, uint64_t s, uint64_t e, uint32_t stream, uint32_t corr)
{
	CUpti_ActivityMemcpy6 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
	m.bytes = 4096;
	m.start = s;
	m.end = e;
	m.contextId = 1;
	m.streamId = stream;
	m.correlationId = corr;
	m.copyCount = 1;
	put(b, &m, sizeof(m));
}

static void test_no_trace_out(void **state)
{
	init_fn init = (init_fn)sym("InitializeInjection");
	finish_fn finish = (finish_fn)sym("hb_inject_finish");

	(void)state;
	unsetenv("HETBATCH_TRACE_OUT");
	assert_int_equal(init(), 1);
	assert_int_equal(finish(), -1);
}

/* With HETBATCH_TRACE_OUT set and no GPU, CUPTI refuses to trace: the
 * library says so and does not write a file that would look complete.
 * Skipped where a GPU is visible (it would really trace this process). */
static void test_no_gpu(void **state)
{
	init_fn init = (init_fn)sym("InitializeInjection");
	finish_fn finish = (finish_fn)sym("hb_inject_finish");
	char path[256];
	int n = 0;

	(void)state;
	if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0)
		skip();
	snprintf(path, sizeof(path), "/tmp/hb-inject-nogpu-%ld.ktrace", (long)getpid());
	setenv("HETBATCH_TRACE_OUT", path, 1);
	assert_int_equal(init(), 1);
	assert_int_equal(finish(), -1);
	assert_int_equal(access(path, F_OK), -1);
	unsetenv("HETBATCH_TRACE_OUT");
}

static void test_buffers_to_file(void **state)
{
	static struct actbuf b1, b2;
	feed_fn feed = (feed_fn)sym("hb_inject_test_feed");
	write_fn wr = (write_fn)sym("hb_inject_test_write");
	struct hb_error err = { 0 };
	struct hb_ktrace t = { 0 };
	struct hb_kt_result r = { 0 };
	char path[256];
	const uint64_t B = 1700000000000000000ull;

	(void)state;
	b1.len = b2.len = 0;
	/* buffer 1: thread 5's iteration and forward; the end of forward
	 * arrives before its start (buffers of two threads out of order) */
	put_marker(&b1, 0, 2, 5, B + 130, NULL);
	put_marker(&b1, 1, 1, 5, B + 100, "iteration");
	put_marker(&b1, 1, 2, 5, B + 110, "forward");
	put_api(&b1, CUPTI_ACTIVITY_KIND_RUNTIME, 1, 5, B + 120, B + 125);
	put_api(&b1, CUPTI_ACTIVITY_KIND_DRIVER, 1, 5, B + 121, B + 124);
	put_api(&b1, CUPTI_ACTIVITY_KIND_RUNTIME, 2, 6, B + 126, B + 127);   /* launched nothing: not written */
	/* an instantaneous marker (nvtxMark) is no range */
	{
		CUpti_ActivityMarker2 m;

		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MARKER;
		m.flags = CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS;
		m.timestamp = B + 111;
		m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
		m.name = "mark";
		put(&b1, &m, sizeof(m));
	}
	/* thread 6: a range whose name has a newline and a tab */
	put_marker(&b1, 1, 3, 6, B + 140, "weight\ncopy\tx");
	put_marker(&b1, 0, 3, 6, B + 150, NULL);
	put_api(&b1, CUPTI_ACTIVITY_KIND_RUNTIME, 3, 6, B + 141, B + 142);
	/* buffer 2: the device work, and the end of the iteration */
	put_kernel(&b2, B + 200, B + 300, 7, 1);
	put_memcpy(&b2, B + 310, B + 330, 8, 3);
	put_kernel(&b2, 0, 0, 7, 9);             /* no timestamps: untimed */
	put_marker(&b2, 0, 1, 5, B + 400, NULL);
	feed((uint8_t *)b1.words, b1.len);
	feed((uint8_t *)b2.words, b2.len);

	snprintf(path, sizeof(path), "/tmp/hb-inject-test-%ld.ktrace", (long)getpid());
	assert_int_equal(wr(path), 0);
	if (hb_ktrace_read(path, &t, &err))
		fail_msg("%s", err.msg);
	unlink(path);
	assert_int_equal(t.untimed, 1);
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.nranges, 3);
	assert_string_equal(hb_ktrace_range_name(&t, &t.ranges[0]), "iteration");
	assert_string_equal(hb_ktrace_range_name(&t, &t.ranges[1]), "forward");
	assert_string_equal(hb_ktrace_range_name(&t, &t.ranges[2]), "weight?copy?x");
	assert_int_equal(t.ranges[1].end_ns, B + 130);
	assert_int_equal(t.napis, 3);            /* corr 1 twice (runtime, driver), corr 3; not corr 2 */
	assert_int_equal(t.dev.nrecs, 2);
	assert_int_equal(hb_ktrace_attribute(&t, NULL, &r, &err), 0);
	assert_int_equal(r.niters, 1);
	assert_int_equal(r.attributed, 1);
	assert_int_equal(r.unattributed, 1);     /* corr 3: thread 6's range is no phase name */
	assert_int_equal(r.ignored_ranges, 1);
	assert_true(fabs(r.iters[0].ph[HB_KT_FWD].union_s - 100e-9) < 1e-15);
	assert_true(fabs(r.iters[0].ph[HB_KT_OTHER].union_s - 20e-9) < 1e-15);
	assert_true(fabs(r.iters[0].iter_s - 300e-9) < 1e-15);
	hb_kt_result_free(&r);
	hb_ktrace_free(&t);

	/* what was fed is forgotten after a write */
	assert_int_equal(wr(path), 0);
	assert_int_equal(hb_ktrace_read(path, &t, &err), 0);
	unlink(path);
	assert_int_equal(t.nranges, 0);
	assert_int_equal(t.dev.nrecs, 0);
	hb_ktrace_free(&t);
	/* an unwritable place: -1, no file */
	assert_int_equal(wr("/nonexistent-dir/x.ktrace"), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_trace_out),
		cmocka_unit_test(test_no_gpu),
		cmocka_unit_test(test_buffers_to_file),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_inject PATH/libhetbatch_inject.so\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "test_inject: %s\n", dlerror());
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
