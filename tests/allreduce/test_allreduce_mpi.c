/* `mpirun -np 2 hetbatch profile allreduce --backend cpu`: two ranks on this
 * host (scope intra, N = 2) fill 4 allreduce rows and the Eq. 3 fit with its
 * r2; the table's busbw is positive and time grows with size; only rank 0
 * prints, also when the run fails (a usage error, the cuda backend without
 * a GPU).  Skipped (77) in a build without MPI, when mpirun is not on PATH
 * or when it cannot start `true` twice here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hb_config.h"
#include "allreduce.h"
#include "../cli_run.h"
#include "profdb.h"

#define SIZES_MIB { 1, 5, 10, 20 }

static const char *mpirun_flags;

/* `mpirun -np 2 FLAGS hetbatch ARGS` in tmpdir, output captured; the exit
 * status.  Open MPI's own start-up allocations are never freed: no leak
 * checks for the MPI library under ASan. */
static int mpi_run(const char *fmt, ...) HB_PRINTF(1, 2);
static int mpi_run(const char *fmt, ...)
{
	char args[2048], cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 mpirun -np 2 %s '%s' %s >'%s' 2>'%s'", tmpdir,
		 mpirun_flags, exe, args, outf, errf);
	st = system(cmd);
	assert_true(st != -1 && WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* Occurrences of what in the file. */
static int count_in(const char *file, const char *what)
{
	char *text = slurp(file, NULL), *p = text;
	int n = 0;

	while ((p = strstr(p, what))) {
		n++;
		p += strlen(what);
	}
	free(text);
	return n;
}

/* The table rows of stdout: size, count, time (us), algbw, busbw. */
static int table(double rows[][5], int max)
{
	char *text = slurp(outf, NULL), *line, *save = NULL;
	int n = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		double v[5];

		if (line[0] == '#' || sscanf(line, "%lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
			continue;
		assert_true(n < max);
		memcpy(rows[n++], v, sizeof(v));
	}
	free(text);
	return n;
}

/* 1 if the table's times grow with size; else says where they do not. */
static int increasing(double tab[][5], int n)
{
	for (int i = 1; i < n; i++)
		if (!(tab[i][2] > tab[i - 1][2])) {
			fprintf(stderr, "time at %.0f bytes (%.2f us) is not above %.0f bytes' (%.2f us)\n", tab[i][0],
				tab[i][2], tab[i - 1][0], tab[i - 1][2]);
			return 0;
		}
	return 1;
}

static void test_two_ranks(void **state)
{
	static const int mib[] = SIZES_MIB;
	struct hb_profdb *db = NULL;
	struct hb_allreduce_row *rows;
	struct hb_allreduce_fit fit;
	struct hb_error err = { 0 };
	char path[600], *text;
	double tab[8][5];
	int n, found = 0, rc, attempt;

	(void)state;
	/* Timings on a small shared machine (two ranks oversubscribing two
	 * cores, sanitizers) have spikes: the growth with size is asked of one
	 * of three runs; everything else of every run. */
	for (attempt = 1; attempt <= 3; attempt++) {
		rc = mpi_run("profile allreduce --backend cpu --sizes 1,5,10,20 --link shm-test --bandwidth 10e9 "
			     "--db tmp.db");
		if (rc != 0)
			fail_msg("exit %d: %s", rc, slurp(errf, NULL));
		text = slurp(outf, NULL);
		printf("%s", text);
		free(text);
		/* the table: 4 sizes, busbw > 0 */
		assert_int_equal(table(tab, 8), 4);
		for (int i = 0; i < 4; i++) {
			assert_true(tab[i][0] == mib[i] * 1048576.0);
			assert_true(tab[i][4] > 0);
		}
		if (increasing(tab, 4))
			break;
	}
	if (attempt > 3)
		fail_msg("time did not grow with size in 3 runs");
	assert_int_equal(count_in(outf, "intra shm-test: t_ms = "), 1);
	assert_int_equal(count_in(outf, "(r2 "), 1);
	assert_int_equal(count_in(outf, "2 ranks on 1 host"), 1);

	/* the database: rows of N = 2 and the fit at K = 10 GB/s */
	snprintf(path, sizeof(path), "%s/tmp.db", tmpdir);
	assert_int_equal(hb_profdb_open(path, 1, &db, &err), 0);
	assert_int_equal(hb_profdb_get_allreduce(db, "intra", "shm-test", &rows, &n, &err), 0);
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++) {
		assert_int_equal(rows[i].n_gpus, 2);
		assert_string_equal(rows[i].source, "cpu");
		assert_true(rows[i].bytes == mib[i] * 1048576.0);
		/* the table prints what was stored (us, 2 decimals) */
		assert_true(fabs(rows[i].time_s * 1e6 - tab[i][2]) <= 0.0051);
		if (i > 0)
			assert_true(rows[i].time_s > rows[i - 1].time_s);
	}
	free(rows);
	assert_int_equal(hb_profdb_get_allreduce_fit(db, "intra", "shm-test", &fit, &found, &err), 0);
	assert_int_equal(found, 1);
	assert_string_equal(fit.source, "cpu");
	assert_true(fit.bandwidth == 10e9);
	assert_true(isfinite(fit.alpha) && isfinite(fit.beta));
	assert_true(fit.alpha > 0);
	assert_true(isfinite(fit.r2) && fit.r2 <= 1);
	printf("fit: alpha %.4f beta %.4f ms r2 %.4f\n", fit.alpha, fit.beta, fit.r2);
	hb_profdb_close(db);
}

/* Every rank fails alike; one message, from rank 0. */
static void test_failures_print_once(void **state)
{
	char why[256];
	int rc;

	(void)state;
	rc = mpi_run("profile allreduce --backend cpu --sizes abc --db bad.db");
	assert_int_equal(rc, 2);
	assert_int_equal(count_in(errf, "--sizes: value 'abc'"), 1);
	assert_false(exists_in(".", "bad.db"));
	if (hb_allreduce_cuda_devices(why, sizeof(why)) > 0)
		return;  /* a GPU machine: the cuda backend would run */
	rc = mpi_run("profile allreduce --backend cuda --sizes 1 --db bad.db");
	assert_int_equal(rc, 1);
	assert_int_equal(count_in(errf, "no CUDA device"), 1);
	assert_false(exists_in(".", "bad.db"));
}

static int teardown(void **state)
{
	(void)state;
	return cli_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_ranks),
		cmocka_unit_test(test_failures_print_once),
	};
	char probe[256];

	if (!HB_HAVE_MPI) {
		fprintf(stderr, "built without MPI: skipped\n");
		return 77;
	}
	if (!getenv("HETBATCH")) {
		fprintf(stderr, "HETBATCH is not set (run through meson test): skipped\n");
		return 77;
	}
	if (system("command -v mpirun >/dev/null 2>&1") != 0) {
		fprintf(stderr, "mpirun is not on PATH: skipped\n");
		return 77;
	}
	/* Open MPI refuses root unless told; oversubscribe: the test machine
	 * may have fewer cores than ranks.  Single-host runs need no remote
	 * agent; without this Open MPI 4 refuses to start when ssh is not
	 * installed. */
	mpirun_flags = getuid() == 0 ? "--oversubscribe --allow-run-as-root" : "--oversubscribe";
	setenv("OMPI_MCA_plm_rsh_agent", "", 0);
	/* A launcher that cannot start even `true` here is the machine's limit,
	 * not hetbatch's: skip, saying why. */
	snprintf(probe, sizeof(probe), "mpirun -np 2 %s true >/dev/null 2>&1", mpirun_flags);
	if (system(probe) != 0) {
		fprintf(stderr, "'%s' fails on this machine: skipped\n", probe);
		return 77;
	}
	if (cli_setup("allreduce-mpi") < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, teardown);
}
