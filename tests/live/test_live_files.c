/*
 * test_live_files.c: the CSV files of an adaptive live run, written from a
 * hand-made trajectory (no MPI ranks needed): trajectory.csv leaves a value
 * that was not measured empty, never `nan` (docs/outputs.md's convention),
 * and its error_pct is in percent, the unit the live tables print (issue 39
 * item 8).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "live_driver.h"

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	assert_non_null(f);
	assert_non_null(buf);
	assert_true(fread(buf, 1, (1 << 16) - 1, f) > 0);
	fclose(f);
	return buf;
}

static void test_trajectory_empty(void **state)
{
	struct hb_live_segment all;
	struct hb_live_row r[2];
	struct hb_error err = { 0 };
	char dir[] = "/tmp/hb-live-files-XXXXXX", path[64], *text;

	(void)state;
	assert_non_null(mkdtemp(dir));
	memset(&all, 0, sizeof(all));
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 2; i++) {
		r[i].iteration = 10 * i;
		r[i].iters = 10;
		r[i].global_bs = 64;
		r[i].ngpus = 2;
		snprintf(r[i].alloc, sizeof(r[i].alloc), "node0=2");
		snprintf(r[i].method, sizeof(r[i].method), "ddp");
		snprintf(r[i].config, sizeof(r[i].config), "2x32");
		r[i].predicted_s = 0.1;
		r[i].measured_s = 0.11;
		r[i].sum_s = 1.1;
		r[i].loss = 0.5;
	}
	/* the first block: started, nothing measured at its end */
	snprintf(r[0].change, sizeof(r[0].change), "start");
	r[0].change_s = 2.0;
	r[0].similarity = NAN;
	r[0].noise_scale = NAN;
	/* the second: no change, an adaptation point */
	r[1].change_s = NAN;
	r[1].similarity = 0.9;
	r[1].noise_scale = 120;
	all.rows = r;
	all.nrows = 2;
	assert_int_equal(hb_live_write_trajectory(dir, &all, &err), 0);
	snprintf(path, sizeof(path), "%s/trajectory.csv", dir);
	text = slurp_file(path);
	assert_non_null(strstr(text, ",measured_s,error_pct,block_s,"));
	assert_null(strstr(text, "nan"));
	assert_null(strstr(text, "inf"));
	/* predicted 0.1, measured 0.11: +10 %; block 0 has no similarity or noise
	 * scale, block 1 no change cost */
	assert_non_null(strstr(text, "\n0,0,0,10,64,2,node0=2,ddp,\"2x32\",0.1,0.11,10,1.1,start,2,,,0.5,\"\"\n"));
	assert_non_null(strstr(text, "\n0,0,10,10,64,2,node0=2,ddp,\"2x32\",0.1,0.11,10,1.1,,,0.9,120,0.5,\"\"\n"));
	free(text);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trajectory_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
