/* `mpirun -np K hetbatch sweep` against `hetbatch sweep -j 1`: the same
 * files byte for byte (rank 0 gathers every rank's rows and writes), one
 * table on stdout (only rank 0 prints), for 2 ranks on 1 thread each and 3
 * ranks on 2 threads each.  Skipped (77) in a build without MPI or when
 * mpirun is not on PATH. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hb_config.h"
#include "cli_util.h"

static struct scratch S;
static const char *mpirun_flags;

static void test_mpi_matches_one_process(void **state)
{
	static const char *const files[] = { "results.db", "sweep.csv", "summary.json", "sweep-load1.dat",
					     "sweep-load2.dat", NULL };
	static const struct {
		int np, threads;
	} runs[] = { { 2, 1 }, { 3, 2 } };
	char text[2048];

	(void)state;
	snprintf(text, sizeof(text),
		 "{ \"trace\": { \"file\": \"%s/jobs.csv\" },\n"
		 "  \"clusters\": [ { \"base\": \"demo\" }, { \"base\": \"jabas-quickstart\",\n"
		 "    \"add\": [ { \"gpu\": \"rtx-3090\", \"nodes\": 1, \"gpus_per_node\": 4 } ] } ],\n"
		 "  \"loads\": [1, 2], \"policies\": [\"fifo\", \"tiresias\", \"optimus\"], \"seeds\": [1, 2, 3] }\n",
		 S.fixtures);
	assert_int_equal(write_in(&S, "m.json", text), 0);
	if (sh(&S, "'%s' -q sweep m.json -j 1 --out one --plot", S.exe) != 0)
		fail_msg("-j 1: %s", slurp(S.err, NULL));
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		char dir[32], *out, *p;
		int tables = 0;

		snprintf(dir, sizeof(dir), "np%d", runs[r].np);
		/* Open MPI's own start-up allocations are never freed: under
		 * ASan leak checks stay on for the -j runs of the sweep tests,
		 * not for the MPI library */
		if (sh(&S, "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 mpirun -np %d %s '%s' sweep m.json -j %d --out %s "
			   "--plot",
		       runs[r].np, mpirun_flags, S.exe, runs[r].threads, dir) != 0)
			fail_msg("mpirun -np %d: %s", runs[r].np, slurp(S.err, NULL));
		for (int i = 0; files[i]; i++)
			if (!same_file(&S, "one", dir, files[i]))
				fail_msg("%s differs between -j 1 and mpirun -np %d", files[i], runs[r].np);
		out = slurp(S.out, NULL);
		assert_non_null(out);
		for (p = out; (p = strstr(p, "points ran; wall time")); p++)
			tables++;
		assert_int_equal(tables, 1);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mpi_matches_one_process),
	};
	int rc;

	if (!HB_HAVE_MPI) {
		fprintf(stderr, "built without MPI: skipped\n");
		return 77;
	}
	if (system("command -v mpirun >/dev/null 2>&1") != 0) {
		fprintf(stderr, "mpirun is not on PATH: skipped\n");
		return 77;
	}
	/* Open MPI refuses root unless told; oversubscribe: the test machine
	 * may have fewer cores than ranks */
	mpirun_flags = getuid() == 0 ? "--oversubscribe --allow-run-as-root" : "--oversubscribe";
	/* A launcher that cannot start even `true` here (Open MPI without an
	 * ssh/rsh agent, no shared memory in a container) is the machine's
	 * limit, not hetbatch's: skip, saying why. */
	/* Single-host runs need no remote agent; without this Open MPI 4
	 * refuses to start when ssh is not installed. */
	setenv("OMPI_MCA_plm_rsh_agent", "", 0);
	{
		char probe[256];

		snprintf(probe, sizeof(probe), "mpirun -np 2 %s true >/dev/null 2>&1", mpirun_flags);
		if (system(probe) != 0) {
			fprintf(stderr, "'mpirun -np 2 %s true' fails on this machine: skipped\n", mpirun_flags);
			return 77;
		}
	}
	if ((rc = scratch_init(&S)) != 0)
		return rc;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (rc == 0)
		scratch_remove(&S);
	return rc;
}
