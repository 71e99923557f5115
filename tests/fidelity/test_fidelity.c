/* Pollux fidelity's pieces that need no data: the artifact's batch rule
 * (simulator.py Job.update_local_bsz, optimus.py predict_step_time) and the
 * Delaunay interpolation (solver/interp3.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "fidelity.h"
#include "interp3.h"

static void test_batch_rule(void **state)
{
	int a, s;

	(void)state;
	/* CIFAR-10 TunedJobs (6, 2048), max local 1024: 342 x 6 = 2052 (the
	 * artifact's logged batch_size for cifar10-0 of workload 1). */
	assert_int_equal(hb_fid_batch(2048, 6, 1024, 4096, 128, &a, &s), 2052);
	assert_int_equal(a, 342);
	assert_int_equal(s, 0);
	/* DeepSpeech2 (6, 320), max local 80: 54 x 6 = 324. */
	assert_int_equal(hb_fid_batch(320, 6, 80, 640, 20, &a, &s), 324);
	/* Above max local: micro-steps; 2048 on 1 GPU of max 1024: s 1, 1024. */
	assert_int_equal(hb_fid_batch(2048, 1, 1024, 4096, 128, &a, &s), 2048);
	assert_int_equal(a, 1024);
	assert_int_equal(s, 1);
	/* One GPU above M0 gets a micro-step even when the batch fits (the
	 * statistics need two atomic batches): 256 on 1 GPU, M0 128. */
	assert_int_equal(hb_fid_batch(256, 1, 1024, 4096, 128, &a, &s), 256);
	assert_int_equal(a, 128);
	assert_int_equal(s, 1);
	/* ... but not at M0 itself, and always with m0 = 0 (Optimus's rule). */
	assert_int_equal(hb_fid_batch(128, 1, 1024, 4096, 128, &a, &s), 128);
	assert_int_equal(s, 0);
	assert_int_equal(hb_fid_batch(128, 1, 1024, 4096, 0, &a, &s), 128);
	assert_int_equal(s, 1);
	assert_int_equal(a, 64);
	/* The cap: atomic <= floor(max batch / (n (s + 1))): 8 x 7 > 48. */
	assert_int_equal(hb_fid_batch(50, 7, 8, 48, 8, &a, &s), 42);
	assert_int_equal(a, 6);
	/* Nonsense in, nothing out. */
	assert_int_equal(hb_fid_batch(0, 4, 8, 48, 8, &a, &s), 0);
	assert_int_equal(hb_fid_batch(64, 0, 8, 48, 8, &a, &s), 0);
}

static void test_fidelity_names(void **state)
{
	int f = -1;

	(void)state;
	assert_int_equal(hb_fidelity_parse("pollux", &f), 0);
	assert_int_equal(f, HB_FIDELITY_POLLUX);
	assert_int_equal(hb_fidelity_parse("none", &f), 0);
	assert_int_equal(f, HB_FIDELITY_NONE);
	assert_int_equal(hb_fidelity_parse("Pollux", &f), -1);
	assert_string_equal(hb_fidelity_name(HB_FIDELITY_POLLUX), "pollux");
}

/* A linear function is reproduced exactly inside the hull, whatever the
 * tetrahedra; outside the hull there is no value (the artifact's NaN). */
static void test_interp3_linear(void **state)
{
	enum { N = 60 };
	double xyz[3 * N], val[2 * N], q[3], out[2];
	struct hb_interp3 t;
	struct hb_error err = { 0 };
	unsigned x = 12345;

	(void)state;
	for (int i = 0; i < N; i++) {
		for (int d = 0; d < 3; d++) {
			x = x * 1103515245u + 12345u;
			xyz[3 * i + d] = (double)(x >> 16 & 1023) / 1023.0 * (d == 2 ? 200.0 : 16.0);
		}
		val[2 * i] = 1.5 + 0.25 * xyz[3 * i] - 0.125 * xyz[3 * i + 1] + 0.01 * xyz[3 * i + 2];
		val[2 * i + 1] = -2.0 * xyz[3 * i + 2];
	}
	/* The corners of a box enclose every probe below. */
	for (int c = 0; c < 8; c++) {
		int i = c;

		xyz[3 * i] = c & 1 ? 16.0 : 0.0;
		xyz[3 * i + 1] = c & 2 ? 16.0 : 0.0;
		xyz[3 * i + 2] = c & 4 ? 200.0 : 0.0;
		val[2 * i] = 1.5 + 0.25 * xyz[3 * i] - 0.125 * xyz[3 * i + 1] + 0.01 * xyz[3 * i + 2];
		val[2 * i + 1] = -2.0 * xyz[3 * i + 2];
	}
	assert_int_equal(hb_interp3_build(&t, xyz, val, N, &err), 0);
	assert_true(t.nsimp > 0);
	for (int k = 0; k < 200; k++) {
		x = x * 1103515245u + 12345u;
		q[0] = (double)(x >> 8 & 4095) / 4095.0 * 16.0;
		x = x * 1103515245u + 12345u;
		q[1] = (double)(x >> 8 & 4095) / 4095.0 * 16.0;
		x = x * 1103515245u + 12345u;
		q[2] = (double)(x >> 8 & 4095) / 4095.0 * 200.0;
		assert_int_equal(hb_interp3_eval(&t, q, out), 1);
		assert_true(fabs(out[0] - (1.5 + 0.25 * q[0] - 0.125 * q[1] + 0.01 * q[2])) < 1e-9);
		assert_true(fabs(out[1] + 2.0 * q[2]) < 1e-9);
	}
	q[0] = 17.0;
	q[1] = 3.0;
	q[2] = 50.0;
	assert_int_equal(hb_interp3_eval(&t, q, out), 0);
	hb_interp3_free(&t);
	/* Too few points, and points on one plane, are refused. */
	assert_int_equal(hb_interp3_build(&t, xyz, val, 3, &err), -1);
	for (int i = 0; i < N; i++)
		xyz[3 * i + 2] = 5.0;
	assert_int_equal(hb_interp3_build(&t, xyz, val, N, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_rule),
		cmocka_unit_test(test_fidelity_names),
		cmocka_unit_test(test_interp3_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
