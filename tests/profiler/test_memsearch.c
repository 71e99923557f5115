/*
 * test_memsearch.c: the memory profiler's search (profiler/memsearch.c)
 * against a fake allocator with a known limit, and the VSW set of the
 * computation profiler.
 *
 * The fake device is the cpu backend with mem_alloc replaced: it refuses
 * any allocation that would take the bytes in use past LIMIT and counts
 * calls.  The expected n_max comes from first principles: a state of n
 * VSWs holds n per-VSW arenas A(B) plus the main VSW's optimizer state O,
 * both read off unconstrained states, so n fits iff n A(B) + O <= LIMIT;
 * the artifact's rules then cap it and keep it non-increasing in B.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device.h"
#include "measure.h"
#include "runner.h"
#include "workload.h"

/* ---- the fake allocator ------------------------------------------------ */

#define MAX_BLOCKS 4096

static struct {
	double limit, used;
	long calls, refused;
	long trials;          /* allocations made with nothing in use: one per trial state */
	void *ptr[MAX_BLOCKS];
	size_t size[MAX_BLOCKS];
} fake;

static int fake_alloc(struct hb_device *d, size_t bytes, void **p, struct hb_error *err)
{
	int rc;

	fake.calls++;
	if (fake.used == 0)
		fake.trials++;
	if (fake.used + (double)bytes > fake.limit) {
		fake.refused++;
		return HB_DEV_NOMEM;
	}
	rc = hb_device_cpu.mem_alloc(d, bytes, p, err);
	if (rc != 0)
		return rc;
	for (int i = 0; i < MAX_BLOCKS; i++)
		if (!fake.ptr[i]) {
			fake.ptr[i] = *p;
			fake.size[i] = bytes;
			fake.used += (double)bytes;
			return 0;
		}
	fail_msg("fake allocator: too many blocks");
	return -1;
}

static void fake_free(struct hb_device *d, void *p)
{
	for (int i = 0; i < MAX_BLOCKS; i++)
		if (p && fake.ptr[i] == p) {
			fake.used -= (double)fake.size[i];
			fake.ptr[i] = NULL;
		}
	hb_device_cpu.mem_free(d, p);
}

static struct hb_device_ops fake_ops(void)
{
	struct hb_device_ops o = hb_device_cpu;

	o.mem_alloc = fake_alloc;
	o.mem_free = fake_free;
	return o;
}

/* ---- a small CNN spec -------------------------------------------------- */

static struct hb_wl_layer layers[3];
static struct hb_workload spec;

static void make_spec(void)
{
	memset(&spec, 0, sizeof(spec));
	layers[0] = (struct hb_wl_layer){ .kind = HB_WL_CONV, .name = "c1", .tokens = 64, .in = 3, .out = 16,
					  .taps = 9, .relu = 1, .params = 432 };
	layers[1] = (struct hb_wl_layer){ .kind = HB_WL_CONV, .name = "c2", .tokens = 16, .in = 16, .out = 32,
					  .taps = 9, .params = 4608 };
	layers[2] = (struct hb_wl_layer){ .kind = HB_WL_DENSE, .name = "fc", .tokens = 1, .in = 512, .out = 10,
					  .params = 5120 };
	spec.layers = layers;
	spec.nlayers = 3;
	snprintf(spec.model, sizeof(spec.model), "t-cnn");
	spec.params = 432 + 4608 + 5120;
	spec.nbuckets = 1;
	spec.buckets[0] = 4 * spec.params;
	spec.optimizer = HB_WL_ADAM;
	spec.lr = 1e-3;
	spec.beta1 = 0.9;
	spec.beta2 = 0.999;
	spec.eps = 1e-8;
}

/* Bytes held by a state of n VSWs at batch B on an unconstrained device. */
static double state_bytes(int B, int n)
{
	struct hb_device_config cfg = { .mem_limit_bytes = 1e12 };
	struct hb_error err = { 0 };
	struct hb_device *dev;
	struct hb_stream *s[16];
	struct hb_wl_state *st;
	double b;

	assert_int_equal(hb_device_cpu.open(&cfg, &dev, &err), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(hb_device_cpu.stream_create(dev, &s[i], &err), 0);
	assert_int_equal(hb_wl_state_create(&hb_device_cpu, dev, &spec, B, n, s, 1, &st, &err), 0);
	b = hb_wl_state_bytes(st);
	hb_wl_state_free(st);
	for (int i = 0; i < n; i++)
		hb_device_cpu.stream_destroy(s[i]);
	hb_device_cpu.close(dev);
	return b;
}

static void check_limit(double limit, int cap)
{
	struct hb_device_ops ops = fake_ops();
	struct hb_device_config cfg = { .mem_limit_bytes = 1e12 };
	struct hb_error err = { 0 };
	struct hb_device *dev;
	int lbs[] = { 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048 };
	int nl = (int)(sizeof(lbs) / sizeof(lbs[0]));
	int n_max[16], ndone, prev = cap, expect_done = nl;

	memset(&fake, 0, sizeof(fake));
	fake.limit = limit;
	assert_int_equal(ops.open(&cfg, &dev, &err), 0);
	assert_int_equal(hb_memsearch(&ops, dev, &spec, lbs, nl, cap, 0, 1, n_max, &ndone, NULL, NULL, &err), 0);
	for (int b = 0; b < nl; b++) {
		double one = state_bytes(lbs[b], 1), two = state_bytes(lbs[b], 2);
		double per_vsw = two - one, opt = one - per_vsw;
		int expect = (int)((limit - opt) / per_vsw);

		if (limit < opt + per_vsw)
			expect = 0;
		if (expect > prev)
			expect = prev;
		assert_true(b < ndone);
		if (n_max[b] != expect)
			fail_msg("limit %.0f cap %d: local batch %d: n_max %d, expected %d (A %.0f, O %.0f)", limit, cap,
				 lbs[b], n_max[b], expect, per_vsw, opt);
		prev = expect;
		if (expect == 0) {
			expect_done = b + 1;
			break;
		}
	}
	assert_int_equal(ndone, expect_done);
	/* bisection: at most ceil(log2(cap + 1)) trials per batch, not cap */
	if (fake.trials > (long)ndone * 4)
		fail_msg("limit %.0f cap %d: %ld trials for %d batches", limit, cap, fake.trials, ndone);
	assert_true(fake.used == 0);  /* every trial freed what it took */
	ops.close(dev);
}

static void test_search_limits(void **state)
{
	(void)state;
	make_spec();
	check_limit(2e6, 10);
	check_limit(8e6, 10);
	check_limit(8e6, 3);
	check_limit(40e6, 10);
	check_limit(1e3, 10);  /* nothing fits at the first batch */
}

/* A backend error during a trial is an error, not "does not fit". */
static int broken_gemm(struct hb_stream *s, const struct hb_gemm *g, struct hb_error *err)
{
	(void)s;
	(void)g;
	return hb_runtime_error(err, "gemm exploded");
}

static void test_search_error(void **state)
{
	struct hb_device_ops ops = fake_ops();
	struct hb_device_config cfg = { .mem_limit_bytes = 1e12 };
	struct hb_error err = { 0 };
	struct hb_device *dev;
	int lbs[] = { 8 }, n_max[1], ndone;

	(void)state;
	make_spec();
	memset(&fake, 0, sizeof(fake));
	fake.limit = 1e9;
	ops.gemm = broken_gemm;
	assert_int_equal(ops.open(&cfg, &dev, &err), 0);
	assert_int_equal(hb_memsearch(&ops, dev, &spec, lbs, 1, 4, 1, 1, n_max, &ndone, NULL, NULL, &err), -1);
	assert_non_null(strstr(err.msg, "gemm exploded"));
	assert_true(fake.used == 0);
	ops.close(dev);
}

static void test_vsw_set(void **state)
{
	int s[3];

	(void)state;
	assert_int_equal(hb_measure_vsw_set(0, s), 0);
	assert_int_equal(hb_measure_vsw_set(1, s), 1);
	assert_int_equal(s[0], 1);
	assert_int_equal(hb_measure_vsw_set(3, s), 2);
	assert_int_equal(s[1], 3);
	assert_int_equal(hb_measure_vsw_set(4, s), 3);
	assert_int_equal(s[1], 2);
	assert_int_equal(s[2], 4);
	assert_int_equal(hb_measure_vsw_set(10, s), 3);
	assert_int_equal(s[1], 5);
	assert_int_equal(s[2], 10);
}

/* The runner on the cpu backend: phases are timed, more VSWs never do
 * less work per iteration, and training progresses. */
static void test_runner(void **state)
{
	struct hb_device_config cfg = { .mem_limit_bytes = 1e9 };
	struct hb_error err = { 0 };
	struct hb_device *dev;
	struct hb_runner_opts o = { .local_bs = 16, .n_vsw = 1, .warmup = 1, .iters = 4, .seed = 3 };
	struct hb_runner_result r1, r2;

	(void)state;
	make_spec();
	assert_int_equal(hb_device_cpu.open(&cfg, &dev, &err), 0);
	assert_int_equal(hb_runner_measure(&hb_device_cpu, dev, &spec, &o, &r1, &err), 0);
	o.n_vsw = 2;
	assert_int_equal(hb_runner_measure(&hb_device_cpu, dev, &spec, &o, &r2, &err), 0);
	for (int p = 0; p < HB_PH_N; p++) {
		assert_true(r1.events_s[p] >= 0);
		assert_true(r2.events_s[p] >= 0);
	}
	assert_true(r1.events_s[HB_PH_FWD] > 0 && r1.events_s[HB_PH_BWD] > 0 && r1.events_s[HB_PH_UPDATE] > 0);
	assert_true(r1.events_s[HB_PH_COPY] == 0);  /* one VSW: nothing to copy */
	assert_true(r2.events_s[HB_PH_COPY] > 0);
	assert_true(r1.wall_s >= r1.events_s[HB_PH_FWD] + r1.events_s[HB_PH_BWD]);
	assert_true(r1.mem_bytes > 0 && r2.mem_bytes > r1.mem_bytes);
	assert_false(r1.traced);
	hb_device_cpu.close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_search_limits),
		cmocka_unit_test(test_search_error),
		cmocka_unit_test(test_vsw_set),
		cmocka_unit_test(test_runner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
