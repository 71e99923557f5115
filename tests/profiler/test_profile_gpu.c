/*
 * test_profile_gpu.c: `hetbatch profile --backend cuda` on a real GPU.
 *
 * Exits 77 (skipped) where the cuda backend is not built or no GPU exists.
 * On a GPU: a scaled ResNet-50 and BERT-large are measured with CUPTI;
 * rows have source cupti, no CUPTI record was dropped, every phase is
 * timed, and the events-only run (--no-cupti) agrees with the CUPTI one
 * within 25 % on forward + backward (CUPTI counts kernel time only, events
 * include launch gaps, so they may differ by that much on small kernels).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "cli_run.h"
#include "device.h"

static char db[600];

static double q1(const char *sql)
{
	return cli_query(db, sql);
}

static void test_cuda_profile(void **state)
{
	size_t len;
	int rc;

	(void)state;
	snprintf(db, sizeof(db), "%s/gpu.db", tmpdir);
	rc = run("profile --backend cuda --models resnet50,bert-large --scale 0.25 --local-bs 8,16 --max-vsw 4 "
		 "--warmup 3 --iters 10 --db gpu.db");
	if (rc != 0)
		fail_msg("exit %d\n%s\n%s", rc, slurp(outf, &len), slurp(errf, &len));
	assert_true(q1("SELECT count(*) FROM compute WHERE source = 'cupti'") >= 4);
	assert_true(q1("SELECT count(*) FROM compute WHERE source = 'cupti' AND NOT (fwd_s > 0 AND bwd_s > 0 AND "
		       "update_s > 0 AND total_s >= fwd_s + bwd_s)") == 0);
	assert_true(q1("SELECT max(dropped) FROM run") == 0);
	assert_true(q1("SELECT count(*) FROM run WHERE backend = 'cuda' AND cupti <> '' AND driver <> ''") == 1);
	rc = run("profile --backend cuda --models resnet50 --scale 0.25 --local-bs 8,16 --max-vsw 4 --warmup 3 "
		 "--iters 10 --no-cupti --db gpu.db");
	if (rc != 0)
		fail_msg("exit %d\n%s", rc, slurp(errf, &len));
	assert_true(q1("SELECT count(*) FROM compute a JOIN compute b ON a.model = b.model AND a.local_bs = "
		       "b.local_bs AND a.n_vsw = b.n_vsw WHERE a.source = 'cupti' AND b.source = 'events' AND "
		       "abs((a.fwd_s + a.bwd_s) - (b.fwd_s + b.bwd_s)) > 0.25 * (b.fwd_s + b.bwd_s)") == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuda_profile),
	};
	const struct hb_device_ops *cuda = hb_device_backend("cuda");
	const char *why = NULL;
	int rc;

	if (!cuda || !cuda->available(&why)) {
		fprintf(stderr, "skipped: %s\n", cuda ? why : "built without the CUDA toolkit");
		return 77;
	}
	if (cli_setup("profile-gpu") < 0)
		return 77;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	cli_teardown();
	return rc;
}
